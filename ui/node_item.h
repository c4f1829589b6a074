#pragma once
// One node of the family tree: a circle coloured by status, a selection ring, a gold outline on the
// best path, a short label (id, speedup) and a badge with the visit count, painted only when the zoom
// makes them readable.
#include <QGraphicsItem>
#include <QString>
#include <string>

namespace kforge {
struct NodeRecord;
}

namespace kforge::ui {

// What the snapshot knows about a node beyond its record (see SessionSnapshot).
struct NodeStats {
    int visits = 0;
    double medianUs = 0;         // the candidate's median time; 0: not measured
    double rooflineFraction = 0; // the roofline floor over that median; 0: unknown
};

class NodeItem : public QGraphicsItem {
public:
    static constexpr qreal kRadius = 15;
    // Below this radius in device pixels a node is drawn as a plain square (and the tree view draws
    // the whole tree in batches instead of item by item).
    static constexpr qreal kMinDetailPx = 3.0;
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

    void setRecord(const NodeRecord &node, const NodeStats &stats = {});
    int visits() const { return m_visits; }
    // Dimmed: drawn faint (a filter passes it over, or it only leads to nodes the filter keeps).
    void setDimmed(bool dimmed);
    void setCompared(int order); // 1, 2, ...: its place in the comparison; 0: not compared
    int comparedOrder() const { return m_compared; }
    bool isDimmed() const { return m_dimmed; }
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
    bool m_dimmed = false;
    int m_compared = 0;
    int m_visits = 0;
};

} // namespace kforge::ui
