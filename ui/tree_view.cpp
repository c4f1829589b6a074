#include "ui/tree_view.h"

#include <QElapsedTimer>
#include <QGraphicsPathItem>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QSet>
#include <QStyleOptionGraphicsItem>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>
#include <unordered_set>

#include "ui/node_item.h"
#include "ui/session_context.h"
#include "ui/status_style.h"
#include "ui/theme.h"
#include "ui/tree_layout.h"

namespace kforge::ui {

namespace {
// An elbow between a parent and a child. Zoomed far out, where the pen is under a pixel wide, it is
// drawn as a one-pixel polyline without antialiasing: thousands of them then cost little.
class EdgeItem : public QGraphicsPathItem {
public:
    using QGraphicsPathItem::QGraphicsPathItem;
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *, QWidget *) override
    {
        const qreal scale = QStyleOptionGraphicsItem::levelOfDetailFromTransform(painter->worldTransform());
        const QPainterPath &p = path();
        if (scale * pen().widthF() < 1.0 && p.elementCount() <= 8) {
            QPen thin = pen();
            thin.setCosmetic(true);
            thin.setWidthF(thin.widthF() > 2 ? 2 : 0);
            painter->setRenderHint(QPainter::Antialiasing, false);
            painter->setPen(thin);
            QPointF points[8];
            for (int i = 0; i < p.elementCount(); ++i)
                points[i] = p.elementAt(i);
            painter->drawPolyline(points, p.elementCount());
            return;
        }
        painter->setRenderHint(QPainter::Antialiasing);
        painter->setPen(pen());
        painter->setBrush(Qt::NoBrush);
        painter->drawPath(p);
    }
};

const QColor kGold(0xe8, 0xa2, 0x02);
constexpr qreal kMinScale = 0.05;
constexpr qreal kMaxScale = 6.0;
constexpr qreal kMaxFitScale = 1.4; // a three-node tree should not fill the screen
constexpr qreal kMargin = 40;
} // namespace

TreeView::TreeView(SessionContext *context, QWidget *parent)
    : QGraphicsView(parent), m_context(context), m_scene(new QGraphicsScene(this))
{
    // No BSP index: the scene builds one on a timer after items are added, and for a 10,000-node tree
    // whose edges span most of its width that took seconds on the GUI thread. Items are found by a
    // linear pass instead, which a frame of the tree's size does in well under a millisecond.
    m_scene->setItemIndexMethod(QGraphicsScene::NoIndex);
    setScene(m_scene);
    setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    setDragMode(QGraphicsView::ScrollHandDrag);
    setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
    setResizeAnchor(QGraphicsView::AnchorViewCenter);
    // The legend is painted in viewport coordinates; partial updates would smear it while panning.
    setViewportUpdateMode(QGraphicsView::FullViewportUpdate);
    // Every item sets the pen, brush and hints it paints with, so the view need not save and restore
    // the painter around each of them (thousands of nodes when a large tree is fitted).
    setOptimizationFlags(QGraphicsView::DontSavePainterState | QGraphicsView::DontAdjustForAntialiasing);
    setBackgroundBrush(theme().canvas);
    setMinimumSize(320, 240);

    // Zero-interval timers, not posted calls: the event loop's other timers (and input) get their
    // turn between a large tree's layout, its first paint and each slice of its items.
    m_layoutTimer.setSingleShot(true);
    m_layoutTimer.setInterval(0);
    connect(&m_layoutTimer, &QTimer::timeout, this, &TreeView::refresh);
    m_buildTimer.setSingleShot(true);
    m_buildTimer.setInterval(0);
    connect(&m_buildTimer, &QTimer::timeout, this, [this] { buildItems(kSliceMs); });
    m_animation.setInterval(120);
    connect(&m_animation, &QTimer::timeout, this, &TreeView::animate);

    connect(context, &SessionContext::sessionLoaded, this, [this] {
        clear();
        m_follow = true;
        // A large tree is laid out once the other panels have taken the new session, in an event of
        // its own, so that no one turn of the event loop does all of it.
        if (m_context && m_context->snapshot() && m_context->snapshot()->nodes().size() > size_t(kItemsAtOnce)) {
            m_layoutTimer.start();
            return;
        }
        refresh();
    });
    connect(context, &SessionContext::nodesChanged, this, &TreeView::refresh);
    connect(context, &SessionContext::sessionClosed, this, &TreeView::clear);
    connect(context, &SessionContext::selectionChanged, this, &TreeView::showSelection);
    connect(context, &SessionContext::comparedChanged, this, &TreeView::showCompared);
}

void TreeView::showCompared(const QList<qint64> &ids)
{
    m_overviewDirty = true;
    for (auto *item : std::as_const(m_nodes))
        item->setCompared(int(ids.indexOf(item->id())) + 1);
}

QList<qint64> TreeView::bestPathDrawn() const
{
    QList<qint64> out;
    if (!m_context || !m_context->snapshot())
        return out;
    for (auto id : m_context->snapshot()->bestPath())
        if (auto *item = m_nodes.value(id); item && item->onBestPath())
            out.append(id);
    return out;
}

void TreeView::clear()
{
    m_overviewDirty = true;
    m_shown.reset();
    m_grid.clear();
    m_pending.clear();
    m_pendingNext = 0;
    m_buildTimer.stop();
    m_layoutTimer.stop();
    setViewportUpdateMode(QGraphicsView::FullViewportUpdate);
    m_scene->clear();
    m_nodes.clear();
    m_edges.clear();
    m_animation.stop();
}

// Lays the tree out and brings the scene to the snapshot. Layout, scene rectangle and the overview
// come from the snapshot alone, so a fitted large tree paints at once; the items (one per node and one
// per edge) are made or updated here for a small tree, and for a large one in slices of a few
// milliseconds between which the window paints and takes input, those in view first.
void TreeView::refresh()
{
    if (!m_context || !m_context->snapshot()) {
        clear();
        return;
    }
    m_shown = m_context->snapshot();
    const auto &snap = *m_shown;
    std::vector<TreeEdge> edges;
    edges.reserve(snap.nodes().size());
    for (const auto &n : snap.nodes())
        edges.push_back({n.id, n.parentId});
    const auto layout = layoutTree(edges);
    m_grid.clear();
    for (const auto &p : layout.nodes)
        m_grid[p.id] = QPointF(p.x, p.depth);
    m_columns = layout.width;
    m_levels = layout.levels;
    if (m_follow)
        chooseSpacing(m_columns, m_levels);

    m_filterStates = applyFilter(snap.nodes(), snap.session().proposer, m_filter);
    m_overviewDirty = true;
    // Items of nodes the snapshot no longer has go now; the rest are brought up to date below.
    for (auto it = m_nodes.begin(); it != m_nodes.end();) {
        if (snap.node(it.key())) {
            ++it;
            continue;
        }
        delete m_edges.take(it.key());
        delete it.value();
        it = m_nodes.erase(it);
    }
    bool running = false;
    for (const auto &n : snap.nodes())
        running = running || n.status == "running";

    // The scene rectangle from the layout, with room for every item's ring and caption, and extra
    // room at the bottom so the legend does not cover the deepest row when fitted.
    const QRectF item = NodeItem(0).boundingRect();
    const QRectF grid(0, 0, std::max(0.0, m_columns - 1) * m_columnWidth, std::max(0, m_levels - 1) * m_levelHeight);
    m_scene->setSceneRect(snap.nodes().empty() ? QRectF()
                                               : grid.adjusted(item.left(), item.top(), item.right(), item.bottom())
                                                     .adjusted(-kMargin, -kMargin, kMargin, kMargin + 40));
    if (running && !m_animation.isActive())
        m_animation.start();
    else if (!running)
        m_animation.stop();
    if (m_follow)
        fitTree();

    // Missing items before updates, and what is in view before the rest: a live search's next burst
    // restarts the pass, so every node still gets its item however often that happens.
    const QRectF visible = mapToScene(viewport()->rect()).boundingRect();
    m_pending.clear();
    m_pending.reserve(snap.nodes().size());
    for (const auto &n : snap.nodes())
        m_pending.push_back(n.id);
    auto rank = [&](qint64 id) { return (m_nodes.contains(id) ? 2 : 0) + (visible.contains(scenePos(id)) ? 0 : 1); };
    std::stable_sort(m_pending.begin(), m_pending.end(), [&](qint64 a, qint64 b) { return rank(a) < rank(b); });
    m_pendingNext = 0;
    m_layoutTimer.stop();
    if (m_pending.size() <= size_t(kItemsAtOnce)) {
        buildItems(-1);
    } else {
        viewport()->update();
        m_buildTimer.start();
    }
}

QPointF TreeView::scenePos(qint64 id) const
{
    auto g = m_grid.find(id);
    return g == m_grid.end() ? QPointF() : QPointF(g->second.x() * m_columnWidth, g->second.y() * m_levelHeight);
}

bool TreeView::isBuilding() const
{
    return m_layoutTimer.isActive() || m_pendingNext < m_pending.size();
}

// Makes or updates the items of pending nodes, for at most budgetMs (< 0: all of them).
void TreeView::buildItems(int budgetMs)
{
    if (!m_shown)
        return;
    const auto &snap = *m_shown;
    QElapsedTimer clock;
    clock.start();
    // Drawn as an overview, the tree needs no item to paint: new items must not repaint the view
    // (the scene would, after every slice, for a picture that does not change).
    setViewportUpdateMode(drawsOverview() && budgetMs >= 0 ? QGraphicsView::NoViewportUpdate : QGraphicsView::FullViewportUpdate);
    for (; m_pendingNext < m_pending.size(); ++m_pendingNext) {
        if (budgetMs >= 0 && (m_pendingNext & 31) == 0 && clock.elapsed() >= budgetMs)
            break;
        const NodeRecord *n = snap.node(m_pending[m_pendingNext]);
        if (!n)
            continue;
        updateItem(snap, *n);
    }
    if (m_pendingNext < m_pending.size()) {
        m_buildTimer.start();
    } else {
        m_pending.clear();
        m_pendingNext = 0;
        setViewportUpdateMode(QGraphicsView::FullViewportUpdate);
        viewport()->update(); // whatever moved the view while its own repaints were off
        emit built();
        return;
    }
    // The overview is drawn from the snapshot, so new items change nothing in it: no repaint for them.
    if (!drawsOverview())
        viewport()->update();
}

void TreeView::updateItem(const SessionSnapshot &snap, const NodeRecord &n)
{
    NodeItem *item = m_nodes.value(n.id);
    if (!item) {
        item = new NodeItem(n.id);
        m_scene->addItem(item);
        m_nodes.insert(n.id, item);
    }
    NodeStats stats;
    stats.visits = snap.visits(n.id);
    if (const auto *t = snap.timing(n.id))
        stats.medianUs = t->median;
    stats.rooflineFraction = snap.rooflineFraction(n.id);
    item->setRecord(n, stats);
    const FilterState fs = filterState(n.id);
    item->setDimmed(fs == FilterState::Dimmed);
    item->setVisible(fs != FilterState::Hidden);
    item->setBest(snap.onBestPath(n.id), n.id == snap.bestNodeId() && n.parentId.has_value());
    item->setMarked(n.id == m_context->selectedNode());
    item->setCompared(int(m_context->compared().indexOf(n.id)) + 1);
    const auto *decision = snap.userDecision(n.id);
    item->setDecision(!decision                        ? NodeItem::Decision::None
                      : decision->decision == "accept" ? NodeItem::Decision::Accepted
                                                       : NodeItem::Decision::Rejected);
    item->setPos(scenePos(n.id));
    item->setCaptionVisible(m_columnWidth >= kColumnWidth);

    // The edge into it as an elbow: down from the parent, across, down into the child. Reads better
    // than diagonals when a parent has many children.
    if (!n.parentId || !m_grid.count(*n.parentId)) {
        delete m_edges.take(n.id);
        return;
    }
    const QPointF from = scenePos(*n.parentId) + QPointF(0, NodeItem::kRadius);
    const QPointF to = item->pos() - QPointF(0, NodeItem::kRadius);
    const qreal midY = (from.y() + to.y()) / 2;
    QPainterPath path(from);
    path.lineTo(from.x(), midY);
    path.lineTo(to.x(), midY);
    path.lineTo(to);
    QGraphicsPathItem *edge = m_edges.value(n.id);
    if (!edge) {
        edge = new EdgeItem(path);
        m_scene->addItem(edge);
        m_edges.insert(n.id, edge);
    } else if (edge->path() != path) {
        edge->setPath(path);
    }
    const bool best = snap.onBestPath(n.id) && snap.onBestPath(*n.parentId);
    edge->setPen(best ? QPen(kGold, 4, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin) : QPen(theme().edge, 1.5));
    edge->setZValue(best ? 0.5 : 0);
    const FilterState fs2 = filterState(n.id);
    edge->setVisible(fs2 != FilterState::Hidden);
    edge->setOpacity(fs2 == FilterState::Shown ? 1.0 : 0.2);
}

// Fitted to the width, a wide tree of a few levels is a thin strip with the window empty below it;
// the levels stretch so the tree fills the height too. When even the narrow columns leave labels too
// small to read, the columns close up and only circles are drawn (the hover card still names them).
void TreeView::chooseSpacing(double columns, int levels)
{
    const QSizeF view = viewport()->size();
    const double w = std::max(1.0, columns) , l = std::max(1, levels);
    auto fitScale = [&](qreal colW) { return std::min(kMaxFitScale, view.width() / (w * colW + 2 * kMargin)); };
    m_columnWidth = fitScale(kColumnWidth) * 1.0 >= 0.62 ? kColumnWidth : kTightColumnWidth;
    const qreal scale = fitScale(m_columnWidth);
    const qreal room = view.height() / scale - 2 * kMargin - 40; // the legend's strip
    // With close columns the tree is too wide for labels: let the levels take all the height, else a
    // tree of thousands of nodes is a strip a few pixels high.
    const qreal cap = m_columnWidth < kColumnWidth ? std::max(kMaxLevelHeight, room) : kMaxLevelHeight;
    m_levelHeight = std::clamp(levels > 1 ? room / (l - 1 + 0.6) : kLevelHeight, kLevelHeight, cap);
}

// Moves every item to the current spacing (after a resize changed it).
void TreeView::place()
{
    m_overviewDirty = true;
    for (auto it = m_nodes.begin(); it != m_nodes.end(); ++it)
        if (m_grid.count(it.key()))
            it.value()->setPos(scenePos(it.key()));
}

void TreeView::fitTree()
{
    m_follow = true;
    if (m_grid.empty())
        return;
    fitInView(sceneRect(), Qt::KeepAspectRatio);
    if (transform().m11() > kMaxFitScale)
        setTransform(QTransform::fromScale(kMaxFitScale, kMaxFitScale));
    centerOn(sceneRect().center());
    viewport()->update(); // also while a large tree's items are made and the scene repaints nothing
}

void TreeView::showSelection(qint64 id)
{
    m_overviewDirty = true;
    for (auto *item : std::as_const(m_nodes))
        item->setMarked(item->id() == id);
    if (m_grid.count(id)) // its item may still be on its way
        ensureVisible(QRectF(scenePos(id), QSizeF()).adjusted(-NodeItem::kRadius, -NodeItem::kRadius, NodeItem::kRadius, NodeItem::kRadius),
                      40, 40);
}

void TreeView::animate()
{
    m_phase = (m_phase + 1) % 12;
    for (auto *item : std::as_const(m_nodes))
        if (item->status() == "running")
            item->setPhase(m_phase);
}

void TreeView::zoomBy(qreal factor)
{
    const qreal current = transform().m11();
    const qreal target = std::clamp(current * factor, kMinScale, kMaxScale);
    if (qFuzzyCompare(target, current))
        return;
    m_follow = false;
    scale(target / current, target / current);
    viewport()->update();
}

void TreeView::scrollContentsBy(int dx, int dy)
{
    QGraphicsView::scrollContentsBy(dx, dy);
    if (viewportUpdateMode() == QGraphicsView::NoViewportUpdate)
        viewport()->update(); // a pan while a large tree's items are made (the view's own repaints are off)
}

void TreeView::wheelEvent(QWheelEvent *event)
{
    // 120 units per notch on a mouse; trackpads send smaller steps, so scale continuously.
    zoomBy(std::pow(1.0015, event->angleDelta().y()));
    event->accept();
}

void TreeView::mousePressEvent(QMouseEvent *event)
{
    if (event->button() == Qt::LeftButton) {
        for (auto *item : items(event->position().toPoint())) {
            if (auto *node = qgraphicsitem_cast<NodeItem *>(item)) {
                if (m_context && (event->modifiers() & Qt::ControlModifier))
                    m_context->toggleCompared(node->id()); // Ctrl-click: set it beside the others
                else if (m_context)
                    m_context->select(node->id());
                event->accept();
                return;
            }
        }
    }
    QGraphicsView::mousePressEvent(event); // the background: start a pan
}

void TreeView::keyPressEvent(QKeyEvent *event)
{
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        zoomBy(1.25);
        return;
    case Qt::Key_Minus:
        zoomBy(0.8);
        return;
    case Qt::Key_F:
    case Qt::Key_Home:
        fitTree();
        return;
    case Qt::Key_Up:
    case Qt::Key_Down:
    case Qt::Key_Left:
    case Qt::Key_Right:
        moveSelection(event->key());
        return;
    default:
        QGraphicsView::keyPressEvent(event);
    }
}

void TreeView::resizeEvent(QResizeEvent *event)
{
    QGraphicsView::resizeEvent(event);
    if (!m_follow)
        return;
    const qreal colW = m_columnWidth, levelH = m_levelHeight;
    chooseSpacing(m_columns, m_levels);
    if (colW != m_columnWidth || levelH != m_levelHeight)
        refresh(); // edges and the scene rectangle follow the new spacing; refresh fits
    else
        fitTree();
}

void TreeView::moveSelection(int key)
{
    if (!m_context || !m_context->snapshot())
        return;
    const auto &snap = *m_context->snapshot();
    const NodeRecord *current = snap.node(m_context->selectedNode());
    if (!current) {
        if (!snap.nodes().empty())
            m_context->select(snap.nodes().front().id);
        return;
    }
    // Children and siblings in the order the layout placed them, left to right.
    auto childrenOf = [&](std::optional<int64_t> parent) {
        std::vector<qint64> ids;
        for (const auto &n : snap.nodes())
            if (n.parentId == parent && filterState(n.id) != FilterState::Hidden)
                ids.push_back(n.id);
        std::sort(ids.begin(), ids.end(), [this](qint64 a, qint64 b) { return m_grid[a].x() < m_grid[b].x(); });
        return ids;
    };
    qint64 target = 0;
    if (key == Qt::Key_Up && current->parentId) {
        target = *current->parentId;
    } else if (key == Qt::Key_Down) {
        const auto kids = childrenOf(current->id);
        target = kids.empty() ? 0 : kids.front();
    } else if (key == Qt::Key_Left || key == Qt::Key_Right) {
        const auto siblings = childrenOf(current->parentId);
        auto it = std::find(siblings.begin(), siblings.end(), current->id);
        if (it != siblings.end()) {
            if (key == Qt::Key_Left && it != siblings.begin())
                target = *(it - 1);
            else if (key == Qt::Key_Right && it + 1 != siblings.end())
                target = *(it + 1);
        }
    }
    if (target)
        m_context->select(target);
}

void TreeView::setFilter(const NodeFilter &filter)
{
    m_filter = filter;
    refresh();
}

FilterState TreeView::filterState(qint64 id) const
{
    auto it = m_filterStates.find(id);
    return it == m_filterStates.end() ? FilterState::Shown : it->second;
}

bool TreeView::drawsOverview() const
{
    return !m_grid.empty() && transform().m11() * NodeItem::kRadius < NodeItem::kMinDetailPx;
}

void TreeView::paintEvent(QPaintEvent *event)
{
    if (!drawsOverview()) {
        QGraphicsView::paintEvent(event);
        return;
    }
    QPainter painter(viewport());
    painter.fillRect(viewport()->rect(), backgroundBrush());
    painter.setTransform(viewportTransform());
    paintOverview(&painter);
    drawForeground(&painter, mapToScene(viewport()->rect()).boundingRect());
}

// From the snapshot and the layout, not the items, so that it is whole while the items are being made.
void TreeView::rebuildOverview()
{
    m_overviewDirty = false;
    m_overview = {};
    if (!m_shown || !m_context)
        return;
    const auto &snap = *m_shown;
    const qint64 selected = m_context->selectedNode();
    const auto &compared = m_context->compared();
    std::unordered_map<QRgb, size_t> byColour;
    std::unordered_set<int64_t> sharedDrops; // parent id * 3 + which list: a parent's drop is drawn once per list
    sharedDrops.reserve(snap.nodes().size());
    for (const auto &n : snap.nodes()) {
        const FilterState fs = filterState(n.id);
        if (fs == FilterState::Hidden || !m_grid.count(n.id))
            continue;
        const QPointF pos = scenePos(n.id);
        const bool onPath = snap.onBestPath(n.id);
        QColor c = onPath ? kGold : statusStyle(n.status).fill;
        if (fs == FilterState::Dimmed)
            c.setAlphaF(0.2f);
        auto [it, added] = byColour.try_emplace(c.rgba(), m_overview.nodes.size());
        if (added)
            m_overview.nodes.push_back({c, {}});
        m_overview.nodes[it->second].second.push_back(pos);
        if (n.id == selected || compared.contains(n.id))
            m_overview.marked.push_back(pos);
        if (!n.parentId || !m_grid.count(*n.parentId))
            continue;
        const int list = onPath && snap.onBestPath(*n.parentId) ? 0 : fs != FilterState::Shown ? 1 : 2;
        auto &out = list == 0 ? m_overview.bestEdges : list == 1 ? m_overview.dimmedEdges : m_overview.edges;
        const QPointF from = scenePos(*n.parentId) + QPointF(0, NodeItem::kRadius);
        const QPointF to = pos - QPointF(0, NodeItem::kRadius);
        const qreal midY = (from.y() + to.y()) / 2;
        // Siblings share the drop from their parent: draw it once, not once per child.
        if (sharedDrops.insert(*n.parentId * 3 + list).second)
            out.emplace_back(from, QPointF(from.x(), midY));
        out.emplace_back(QPointF(from.x(), midY), QPointF(to.x(), midY));
        out.emplace_back(QPointF(to.x(), midY), to);
    }
}

// The tree in a handful of calls: thousands of nodes fitted to a window are a few pixels each, where
// circles, outlines and labels would not be seen anyway and item-by-item painting costs a frame.
void TreeView::paintOverview(QPainter *painter)
{
    if (m_overviewDirty)
        rebuildOverview();
    const qreal scale = transform().m11();
    painter->setRenderHint(QPainter::Antialiasing, false);
    auto lines = [painter](const std::vector<QLineF> &l, QColor colour, int width) {
        QPen pen(colour, width);
        pen.setCosmetic(true);
        painter->setPen(pen);
        painter->drawLines(l.data(), int(l.size()));
    };
    const QColor edgeColour = theme().edge;
    QColor dimmedEdge = edgeColour;
    dimmedEdge.setAlphaF(0.2f);
    lines(m_overview.dimmedEdges, dimmedEdge, 0);
    lines(m_overview.edges, edgeColour, 0);
    lines(m_overview.bestEdges, kGold, 2);
    painter->setPen(Qt::NoPen);
    std::vector<QRectF> rects;
    auto squares = [&](const std::vector<QPointF> &centres, qreal devicePx) {
        const qreal half = std::max<qreal>(NodeItem::kRadius, devicePx / scale);
        rects.clear();
        for (const auto &c : centres)
            rects.emplace_back(c.x() - half, c.y() - half, 2 * half, 2 * half);
        painter->drawRects(rects.data(), int(rects.size()));
    };
    painter->setBrush(QColor(0x1e, 0x6f, 0xd9));
    squares(m_overview.marked, 4);
    for (const auto &[colour, centres] : m_overview.nodes) {
        painter->setBrush(colour);
        squares(centres, colour == kGold ? 2 : 1);
    }
}

void TreeView::setPlaceholder(const QString &text)
{
    m_placeholder = text;
    viewport()->update();
}

void TreeView::drawForeground(QPainter *painter, const QRectF &)
{
    if (m_grid.empty()) {
        if (m_context && m_context->snapshot() && !m_context->snapshot()->nodes().empty())
            return; // laid out in a moment
        painter->save();
        painter->resetTransform();
        painter->setPen(theme().mutedInk);
        const QString text = !m_placeholder.isEmpty() ? m_placeholder
                             : m_context && m_context->hasSession()
                                 ? QStringLiteral("This session has no nodes yet.")
                                 : QStringLiteral("Open a session file (Ctrl+O), or start a demo search (Ctrl+R).");
        painter->drawText(viewport()->rect().adjusted(40, 40, -40, -40), Qt::AlignCenter | Qt::TextWordWrap, text);
        painter->restore();
        return;
    }
    // A one-line legend along the bottom edge, in viewport pixels so it never scales with the tree.
    painter->save();
    painter->resetTransform();
    QFont f = font();
    f.setPixelSize(11);
    painter->setFont(f);
    const QFontMetrics fm(f);
    const int rowH = 18, dot = 10, pad = 8;
    struct Entry {
        QColor colour;
        QString text;
        bool line;
    };
    std::vector<Entry> entries;
    for (const auto &s : legendStatuses()) {
        const auto st = statusStyle(s);
        entries.push_back({st.fill, st.label, false});
    }
    entries.push_back({kGold, QStringLiteral("best path"), true});

    // Lay the entries out in rows that fit the viewport, from the bottom up.
    const int maxW = viewport()->width() - 2 * pad;
    std::vector<std::vector<std::pair<int, int>>> rows(1); // (entry, x)
    int x = 0;
    for (int i = 0; i < int(entries.size()); ++i) {
        const int w = dot + 4 + fm.horizontalAdvance(entries[i].text) + 14;
        if (x + w > maxW && x > 0) {
            rows.emplace_back();
            x = 0;
        }
        rows.back().push_back({i, x});
        x += w;
    }
    int width = 0;
    for (const auto &r : rows) {
        const auto &[i, x0] = r.back();
        width = std::max(width, x0 + dot + 4 + fm.horizontalAdvance(entries[i].text));
    }
    const int height = int(rows.size()) * rowH;
    const QRect box(pad, viewport()->height() - pad - height - 6, width + 12, height + 6);
    painter->setRenderHint(QPainter::Antialiasing);
    const Theme colours = theme();
    QColor boxFill = colours.canvas;
    boxFill.setAlpha(225);
    painter->setPen(colours.panelBorder);
    painter->setBrush(boxFill);
    painter->drawRoundedRect(box, 4, 4);
    for (int r = 0; r < int(rows.size()); ++r) {
        const int y = box.top() + 3 + r * rowH;
        for (const auto &[i, x0] : rows[r]) {
            const auto &e = entries[i];
            const int left = box.left() + 6 + x0;
            if (e.line) {
                painter->setPen(QPen(e.colour, 4, Qt::SolidLine, Qt::RoundCap));
                painter->drawLine(left, y + rowH / 2, left + dot, y + rowH / 2);
            } else {
                // A fill darker than the box (the baseline's black on a dark palette) gets a light rim.
                painter->setPen(QPen(e.colour.lightness() < 70 && isDark(palette()) ? colours.mutedInk : e.colour.darker(140), 1));
                painter->setBrush(e.colour);
                painter->drawEllipse(QRect(left, y + (rowH - dot) / 2, dot, dot));
            }
            painter->setPen(colours.ink);
            painter->drawText(QRect(left + dot + 4, y, 400, rowH), Qt::AlignVCenter | Qt::AlignLeft, e.text);
        }
    }
    painter->restore();
}

} // namespace kforge::ui
