#pragma once
// The strip above the tree that narrows it: one status, one template, one proposer, and whether what
// fails is dimmed or hidden. The choices follow the session shown (templates and proposers present
// in it); changing one emits filterChanged() with the whole filter.
#include <QWidget>

#include "ui/node_filter.h"

class QCheckBox;
class QComboBox;
class QLabel;

namespace kforge::ui {

class SessionContext;

class FilterBar : public QWidget {
    Q_OBJECT
public:
    explicit FilterBar(SessionContext *context, QWidget *parent = nullptr);

    NodeFilter filter() const;
    QComboBox *statusBox() const { return m_status; }
    QComboBox *templateBox() const { return m_template; }
    QComboBox *proposerBox() const { return m_proposer; }
    QCheckBox *hideBox() const { return m_hide; }
    void clear();

signals:
    void filterChanged(const kforge::ui::NodeFilter &filter);

private:
    void refill();
    void emitChanged();
    void updateCount();

    SessionContext *m_context;
    QComboBox *m_status;
    QComboBox *m_template;
    QComboBox *m_proposer;
    QCheckBox *m_hide;
    QLabel *m_count;
    bool m_filling = false;
};

} // namespace kforge::ui
