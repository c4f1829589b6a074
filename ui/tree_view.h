#pragma once
// The family tree of a session: nodes placed by layoutTree(), coloured by status, the best path in
// gold, a person's accept or reject as a badge, the visit count on a pill. Wheel zooms about the
// cursor, dragging the background pans, clicking a node selects it in the SessionContext and
// Ctrl-click adds it to the comparison (or takes it out); the arrow keys move to the parent (Up), the
// first child (Down) and the siblings (Left, Right). Until the user zooms, the view keeps the whole
// tree in sight as it grows, and spreads it over the window: levels stretch to fill the height, and
// columns close up when the tree is too wide for labels to be readable anyway. A filter (status,
// template, proposer) dims or hides nodes without moving any.
#include <QGraphicsView>
#include <QHash>
#include <QPointer>
#include <QTimer>
#include <vector>
#include <unordered_map>

#include "ui/node_filter.h"
#include "ui/session_snapshot.h"

class QGraphicsPathItem;

namespace kforge::ui {

class NodeItem;
class SessionContext;

class TreeView : public QGraphicsView {
    Q_OBJECT
public:
    static constexpr qreal kColumnWidth = 66;   // wide enough for a "12.34x" caption
    static constexpr qreal kTightColumnWidth = 38; // circles only: labels would be unreadable at this scale
    static constexpr qreal kLevelHeight = 84;      // the least; stretched to fill the window
    static constexpr qreal kMaxLevelHeight = 900;
    // Up to this many nodes the items are made in one go; a larger tree gets them in slices of
    // kSliceMs between which the window paints (the overview needs no items) and takes input.
    static constexpr int kItemsAtOnce = 1500;
    static constexpr int kSliceMs = 6;

    explicit TreeView(SessionContext *context, QWidget *parent = nullptr);

    int nodeItemCount() const { return int(m_nodes.size()); }
    qreal columnWidth() const { return m_columnWidth; }
    qreal levelHeight() const { return m_levelHeight; }
    NodeItem *nodeItem(qint64 id) const { return m_nodes.value(id); }
    QList<qint64> bestPathDrawn() const; // node ids whose items are marked on the best path, root first
    // What the empty view says (why a file could not be opened, what to do); empty: the default hint.
    void setPlaceholder(const QString &text);
    // Dims or hides the nodes the filter passes over; their ancestors stay reachable.
    void setFilter(const NodeFilter &filter);
    const NodeFilter &filter() const { return m_filter; }
    FilterState filterState(qint64 id) const;
    QString placeholder() const { return m_placeholder; }
    // True while items of a large tree are still being made (nodeItem() may then be null for some).
    bool isBuilding() const;

signals:
    void built(); // every node of the shown snapshot has its item

public slots:
    void fitTree(); // and follow the tree again as it grows

protected:
    void wheelEvent(QWheelEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void drawForeground(QPainter *painter, const QRectF &rect) override;
    void paintEvent(QPaintEvent *event) override;
    void scrollContentsBy(int dx, int dy) override;

public:
    // True while nodes are too small to draw one by one (see NodeItem::kMinDetailPx): the view then
    // paints the whole tree in a few batched calls, squares and one-pixel lines.
    bool drawsOverview() const;

private:
    void clear();
    void refresh();
    void buildItems(int budgetMs);
    void updateItem(const SessionSnapshot &snap, const NodeRecord &node);
    QPointF scenePos(qint64 id) const; // from the last layout at the current spacing
    void showSelection(qint64 id);
    void showCompared(const QList<qint64> &ids);
    void animate();
    void zoomBy(qreal factor);
    void chooseSpacing(double columns, int levels);
    void place();
    void moveSelection(int key);
    void rebuildOverview();
    void paintOverview(QPainter *painter);

    QPointer<SessionContext> m_context;
    SnapshotPtr m_shown; // what the layout, the overview and the items follow
    std::vector<qint64> m_pending; // nodes whose items are still to be made or updated
    size_t m_pendingNext = 0;
    QTimer m_buildTimer;
    QTimer m_layoutTimer; // a large tree's layout, after the panels have taken a new session
    QGraphicsScene *m_scene;
    QHash<qint64, NodeItem *> m_nodes;
    QHash<qint64, QGraphicsPathItem *> m_edges; // keyed by the child's id
    QTimer m_animation;
    int m_phase = 0;
    QString m_placeholder;
    qreal m_columnWidth = kColumnWidth;
    qreal m_levelHeight = kLevelHeight;
    double m_columns = 0; // of the last layout
    int m_levels = 0;
    std::unordered_map<qint64, QPointF> m_grid; // each node's (column, depth) in the last layout
    // The overview's batches, rebuilt when the tree, the filter or the marks change.
    struct Overview {
        std::vector<std::pair<QColor, std::vector<QPointF>>> nodes; // centres by colour
        std::vector<QPointF> marked;                                // selection and compared nodes
        std::vector<QLineF> edges, dimmedEdges, bestEdges;
    } m_overview;
    bool m_overviewDirty = true;
    NodeFilter m_filter;
    std::unordered_map<int64_t, FilterState> m_filterStates;
    bool m_follow = true; // false once the user zooms: then growth must not move their view
};

} // namespace kforge::ui
