#pragma once
// One node of the family tree: a circle coloured by status, a selection ring, a gold outline on the
// best path, and a short label (id, speedup) painted only when the zoom makes it readable.
#include <QGraphicsItem>
#include <QString>
#include <string>

namespace kforge {
struct NodeRecord;
}

namespace kforge::ui {

class NodeItem : public QGraphicsItem {
public:
    static constexpr qreal kRadius = 15;
    enum { Type = UserType + 1 };
    enum DataRole { NodeIdRole = 0 }; // data(NodeIdRole) holds the node id, for tests and tools

    explicit NodeItem(qint64 id);

    qint64 id() const { return m_id; }
    const std::string &status() const { return m_status; }
    bool onBestPath() const { return m_bestPath; }
    bool isBest() const { return m_best; }
    bool isMarked() const { return m_marked; }
    enum class Decision { None, Accepted, Rejected }; // a person's, drawn as a badge
    Decision decision() const { return m_decision; }

    void setRecord(const NodeRecord &node);
    void setBest(bool onPath, bool isBest);
    void setMarked(bool marked); // the selected node; not QGraphicsItem selection, which panning clears
    void setPhase(int phase);    // animates the outline of running nodes
    void setDecision(Decision decision);
    void setCaptionVisible(bool visible); // off when the columns are too close for a caption

    int type() const override { return Type; }
    QRectF boundingRect() const override;
    QPainterPath shape() const override;
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;

private:
    qint64 m_id;
    std::string m_status;
    QString m_caption; // under the circle: speedup or a one-word state
    bool m_bestPath = false;
    bool m_best = false;
    bool m_marked = false;
    int m_phase = 0;
    Decision m_decision = Decision::None;
    bool m_captionVisible = true;
};

} // namespace kforge::ui
