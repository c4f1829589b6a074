#pragma once
// The family tree of a session: nodes placed by layoutTree(), coloured by status, the best path in
// gold. Wheel zooms about the cursor, dragging the background pans, clicking a node selects it in the
// SessionContext. Until the user zooms, the view keeps the whole tree in sight as it grows.
#include <QGraphicsView>
#include <QHash>
#include <QPointer>
#include <QTimer>

class QGraphicsPathItem;

namespace kforge::ui {

class NodeItem;
class SessionContext;

class TreeView : public QGraphicsView {
    Q_OBJECT
public:
    static constexpr qreal kColumnWidth = 66; // wide enough for a "12.34x" caption
    static constexpr qreal kLevelHeight = 84;

    explicit TreeView(SessionContext *context, QWidget *parent = nullptr);

    int nodeItemCount() const { return int(m_nodes.size()); }
    NodeItem *nodeItem(qint64 id) const { return m_nodes.value(id); }
    QList<qint64> bestPathDrawn() const; // node ids whose items are marked on the best path, root first
    // What the empty view says (why a file could not be opened, what to do); empty: the default hint.
    void setPlaceholder(const QString &text);
    QString placeholder() const { return m_placeholder; }

public slots:
    void fitTree(); // and follow the tree again as it grows

protected:
    void wheelEvent(QWheelEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void drawForeground(QPainter *painter, const QRectF &rect) override;

private:
    void clear();
    void refresh();
    void showSelection(qint64 id);
    void animate();
    void zoomBy(qreal factor);

    QPointer<SessionContext> m_context;
    QGraphicsScene *m_scene;
    QHash<qint64, NodeItem *> m_nodes;
    QHash<qint64, QGraphicsPathItem *> m_edges; // keyed by the child's id
    QTimer m_animation;
    int m_phase = 0;
    QString m_placeholder;
    bool m_follow = true; // false once the user zooms: then growth must not move their view
};

} // namespace kforge::ui
