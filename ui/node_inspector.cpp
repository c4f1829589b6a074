#include "ui/node_inspector.h"

#include <Qsci/qsciscintilla.h>
#include <QAction>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

#include "ops/operator_meaning.h"
#include "store/llm_calls.h"
#include "search/selection_scores.h"
#include "store/session_store.h"
#include "ui/code_view.h"
#include "ui/diff_view.h"
#include "ui/llm_call_view.h"
#include "ui/session_context.h"
#include "ui/status_style.h"
#include "ui/theme.h"
#include "ui/verdict_pane.h"
#include "util/error.h"

namespace kforge::ui {

namespace {

QPlainTextEdit *makeTextView(QWidget *parent)
{
    auto *t = new QPlainTextEdit(parent);
    t->setReadOnly(true);
    t->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    t->setLineWrapMode(QPlainTextEdit::NoWrap);
    return t;
}

// The profiler report as a user reads it: the headline shares of peak, then the stall reasons.
QString formatProfile(const nlohmann::json &p)
{
    if (p.is_null())
        return QStringLiteral("Not profiled. Profile a CUDA node with: kforge-cli profile --session FILE --node ID");
    auto pct = [&](const char *key) {
        const auto v = p.value(key, nlohmann::json());
        return v.is_number() ? QString::number(v.get<double>(), 'f', 1) + QStringLiteral("%") : QStringLiteral("n/a");
    };
    QString t = QStringLiteral("%1 report for kernel %2\n\n").arg(QString::fromStdString(p.value("tool", "")),
                                                                   QString::fromStdString(p.value("kernel", "")));
    t += QStringLiteral("memory throughput   %1 of peak\n").arg(pct("memory_throughput_pct"));
    t += QStringLiteral("compute throughput  %1 of peak\n").arg(pct("compute_throughput_pct"));
    t += QStringLiteral("achieved occupancy  %1\n").arg(pct("achieved_occupancy_pct"));
    if (p.value("duration_us", nlohmann::json()).is_number())
        t += QStringLiteral("duration            %1 us\n").arg(p["duration_us"].get<double>(), 0, 'f', 2);
    t += QStringLiteral("\ntop stall reasons (warp cycles per issued instruction)\n");
    for (const auto &s : p.value("top_stalls", nlohmann::json::array()))
        t += QStringLiteral("  %1  %2\n").arg(QString::fromStdString(s.value("reason", "")), -22).arg(s.value("value", 0.0), 0, 'f', 2);
    return t;
}

QString jsonText(const nlohmann::json &j)
{
    return j.is_string() ? QString::fromStdString(j.get<std::string>()) : QString::fromStdString(j.dump());
}

QString dims(const nlohmann::json &j)
{
    if (!j.is_array())
        return jsonText(j);
    QStringList parts;
    for (const auto &d : j)
        parts << jsonText(d);
    return QStringLiteral("(") + parts.join(QStringLiteral(", ")) + QStringLiteral(")");
}

// A result of the diff job: which job and node it was for, so a late one is dropped.
struct DiffResult {
    quint64 job = 0;
    DiffRows rows;
};

} // namespace

QString linkCompileLog(const QString &log)
{
    static const QRegularExpression position(
        QStringLiteral(R"((candidate\.(?:cu|cpp))(?:\((\d+)\)|:(\d+)(?::\d+)?))"));
    QString html = QStringLiteral("<pre>");
    qsizetype at = 0;
    auto it = position.globalMatch(log);
    while (it.hasNext()) {
        const auto m = it.next();
        html += log.mid(at, m.capturedStart() - at).toHtmlEscaped();
        const QString line = m.captured(2).isEmpty() ? m.captured(3) : m.captured(2);
        html += QStringLiteral("<a href=\"line:%1\">%2</a>").arg(line, m.captured(0).toHtmlEscaped());
        at = m.capturedEnd();
    }
    html += log.mid(at).toHtmlEscaped() + QStringLiteral("</pre>");
    return html;
}

QString formatLaunchPlan(const std::string &backend, const nlohmann::json &plan)
{
    if (backend != "cuda" || !plan.is_object() || plan.empty())
        return QStringLiteral("No launch plan: a %1 candidate is called through its one entry point (kforge_entry).")
            .arg(QString::fromStdString(backend));
    QString t;
    int i = 0;
    for (const auto &k : plan.value("kernels", nlohmann::json::array())) {
        t += QStringLiteral("kernel %1: %2\n").arg(++i).arg(QString::fromStdString(k.value("name", "?")));
        t += QStringLiteral("  grid          %1\n").arg(dims(k.value("grid", nlohmann::json())));
        t += QStringLiteral("  block         %1\n").arg(dims(k.value("block", nlohmann::json())));
        if (k.contains("cluster"))
            t += QStringLiteral("  cluster       %1\n").arg(dims(k["cluster"]));
        if (k.contains("shared_bytes"))
            t += QStringLiteral("  shared bytes  %1\n").arg(jsonText(k["shared_bytes"]));
        QStringList args;
        for (const auto &a : k.value("args", nlohmann::json::array()))
            args << jsonText(a);
        t += QStringLiteral("  arguments     %1\n").arg(args.join(QStringLiteral(", ")));
    }
    for (const auto &w : plan.value("workspace", nlohmann::json::array()))
        t += QStringLiteral("workspace %1\n").arg(QString::fromStdString(w.dump()));
    t += QStringLiteral("\nAs stored:\n") + QString::fromStdString(plan.dump(2));
    return t;
}

NodeInspector::NodeInspector(SessionContext *context, QWidget *parent)
    : QWidget(parent), m_context(context), m_heading(new QLabel(this)), m_decision(new QLabel(this)),
      m_reason(new QLineEdit(this)), m_acceptButton(new QPushButton(QStringLiteral("&Accept"), this)),
      m_rejectButton(new QPushButton(QStringLiteral("&Reject"), this)),
      m_acceptAction(new QAction(QStringLiteral("Accept node…"), this)),
      m_rejectAction(new QAction(QStringLiteral("Reject node…"), this)), m_codeTabs(new QTabWidget(this)),
      m_code(makeCodeView(this)), m_diffBase(new QSpinBox(this)), m_diff(new DiffView(this)), m_tabs(new QTabWidget(this)),
      m_verdict(new VerdictPane(this)), m_compileLog(new QTextBrowser(this)), m_plan(makeTextView(this)),
      m_params(makeTextView(this)), m_profile(makeTextView(this)), m_llm(new LlmCallView(this))
{
    m_heading->setTextFormat(Qt::RichText);
    m_heading->setWordWrap(true);
    m_heading->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_heading->setContentsMargins(6, 4, 6, 0);

    // Accept or reject: A or R anywhere in the window asks for the reason, Enter records it.
    m_decision->setTextFormat(Qt::RichText);
    m_decision->setWordWrap(true);
    m_reason->setPlaceholderText(QStringLiteral("Reason (required), then Accept or Reject"));
    m_reason->setClearButtonEnabled(true);
    m_acceptAction->setShortcut(QKeySequence(Qt::Key_A));
    m_rejectAction->setShortcut(QKeySequence(Qt::Key_R));
    m_acceptAction->setToolTip(QStringLiteral("Accept the selected node, overruling or confirming the guard (A)"));
    m_rejectAction->setToolTip(QStringLiteral("Reject the selected node; it is never the best node then (R)"));
    m_acceptButton->setToolTip(m_acceptAction->toolTip());
    m_rejectButton->setToolTip(m_rejectAction->toolTip());
    addAction(m_acceptAction);
    addAction(m_rejectAction);
    connect(m_acceptAction, &QAction::triggered, this, [this] { beginDecision(QStringLiteral("accept")); });
    connect(m_rejectAction, &QAction::triggered, this, [this] { beginDecision(QStringLiteral("reject")); });
    connect(m_acceptButton, &QPushButton::clicked, this, [this] { beginDecision(QStringLiteral("accept")); });
    connect(m_rejectButton, &QPushButton::clicked, this, [this] { beginDecision(QStringLiteral("reject")); });
    connect(m_reason, &QLineEdit::returnPressed, this, [this] {
        if (!m_pendingDecision.isEmpty())
            commitDecision(m_pendingDecision);
    });
    auto *decide = new QHBoxLayout;
    decide->setContentsMargins(6, 0, 6, 0);
    decide->addWidget(m_reason, 1);
    decide->addWidget(m_acceptButton);
    decide->addWidget(m_rejectButton);

    // The code, and its diff against the parent (0) or any node.
    m_diffBase->setRange(0, std::numeric_limits<int>::max());
    m_diffBase->setSpecialValueText(QStringLiteral("its parent"));
    m_diffBase->setPrefix(QStringLiteral("#"));
    m_diffBase->setToolTip(QStringLiteral("The node to compare with; 0 is the selected node's parent"));
    connect(m_diffBase, &QSpinBox::valueChanged, this, &NodeInspector::updateDiff);
    auto *diffPage = new QWidget(this);
    auto *diffBar = new QHBoxLayout;
    diffBar->setContentsMargins(4, 2, 4, 2);
    diffBar->addWidget(new QLabel(QStringLiteral("Compare with"), diffPage));
    diffBar->addWidget(m_diffBase);
    diffBar->addStretch(1);
    auto *diffLayout = new QVBoxLayout(diffPage);
    diffLayout->setContentsMargins(0, 0, 0, 0);
    diffLayout->addLayout(diffBar);
    diffLayout->addWidget(m_diff, 1);
    m_codeTabs->addTab(m_code, QStringLiteral("Code"));
    m_codeTabs->addTab(diffPage, QStringLiteral("Diff"));
    m_codeTabs->setDocumentMode(true);

    m_compileLog->setOpenLinks(false);
    m_compileLog->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_compileLog->setLineWrapMode(QTextEdit::NoWrap);
    connect(m_compileLog, &QTextBrowser::anchorClicked, this, &NodeInspector::onLogLink);

    m_tabs->addTab(m_verdict, QStringLiteral("Verdict"));
    m_tabs->addTab(m_compileLog, QStringLiteral("Compile log"));
    m_tabs->addTab(m_plan, QStringLiteral("Launch plan"));
    m_tabs->addTab(m_params, QStringLiteral("Parameters"));
    m_tabs->addTab(m_profile, QStringLiteral("Profile"));
    m_tabs->addTab(m_llm, QStringLiteral("LLM")); // shown for nodes an LLM made
    m_tabs->setTabVisible(m_tabs->indexOf(m_llm), false);

    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_codeTabs);
    split->addWidget(m_tabs);
    split->setStretchFactor(0, 5); // the code is what people read most
    split->setStretchFactor(1, 4);
    split->setChildrenCollapsible(false);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(3);
    layout->addWidget(m_heading);
    layout->addWidget(m_decision);
    layout->addLayout(decide);
    layout->addWidget(split, 1);
    m_decision->setContentsMargins(6, 0, 6, 0);

    connect(context, &SessionContext::sessionLoaded, this, &NodeInspector::openStore);
    connect(context, &SessionContext::sessionClosed, this, [this] {
        m_llmLog.reset();
        m_store.reset();
        showNode(0);
    });
    connect(context, &SessionContext::selectionChanged, this, &NodeInspector::showNode);
    connect(context, &SessionContext::nodesChanged, this, &NodeInspector::refreshIfChanged);
    connect(context, &SessionContext::decisionRecorded, this, [this](qint64 id) {
        if (id == m_shown)
            showNode(id);
    });
    showNode(0);
}

NodeInspector::~NodeInspector() = default;

QString NodeInspector::code() const
{
    return m_code->text();
}

QString NodeInspector::compileLog() const
{
    return m_compileLog->toPlainText();
}

QString NodeInspector::profileText() const
{
    return m_profile->toPlainText();
}

QString NodeInspector::launchPlanText() const
{
    return m_plan->toPlainText();
}

QString NodeInspector::heading() const
{
    return m_heading->text();
}

QString NodeInspector::decisionText() const
{
    return m_decision->text();
}

void NodeInspector::setDiffBase(qint64 nodeId)
{
    m_diffBase->setValue(int(nodeId));
    m_codeTabs->setCurrentIndex(1);
}

qint64 NodeInspector::diffBase() const
{
    return m_diffBase->value();
}

bool NodeInspector::showPanel(const QString &name)
{
    if (name == QLatin1String("code") || name == QLatin1String("diff")) {
        m_codeTabs->setCurrentIndex(name == QLatin1String("diff") ? 1 : 0);
        return true;
    }
    const std::pair<const char *, QWidget *> tabs[] = {{"verdict", m_verdict},     {"compile-log", m_compileLog}, {"launch-plan", m_plan},
                                                       {"parameters", m_params}, {"profile", m_profile}, {"llm", m_llm}};
    for (const auto &[key, widget] : tabs)
        if (name == QLatin1String(key)) {
            m_tabs->setCurrentWidget(widget);
            return true;
        }
    return false;
}

void NodeInspector::goToLine(int line)
{
    m_codeTabs->setCurrentWidget(m_code);
    const int l = std::clamp(line - 1, 0, std::max(0, m_code->lines() - 1));
    m_code->setCursorPosition(l, 0);
    m_code->setSelection(l, 0, l, m_code->lineLength(l));
    m_code->ensureLineVisible(l);
}

void NodeInspector::onLogLink(const QUrl &url)
{
    if (url.scheme() == QLatin1String("line"))
        goToLine(url.path().toInt());
}

void NodeInspector::openStore()
{
    m_llmLog.reset();
    m_store.reset();
    m_storeError.clear();
    try {
        m_store = std::make_unique<SessionStore>(m_context->sessionPath().toStdString(), SessionStore::Mode::ReadOnly);
        m_llmLog = std::make_unique<LlmCallLog>(*m_store, false);
    } catch (const std::exception &e) {
        m_storeError = QString::fromStdString(e.what());
    }
    showNode(m_context->selectedNode());
}

void NodeInspector::showMessage(const QString &text)
{
    m_heading->setText(text.toHtmlEscaped());
    m_code->setText(QString());
}

void NodeInspector::showDecision()
{
    const auto &snap = m_context->snapshot();
    const NodeRecord *rec = snap ? snap->node(m_shown) : nullptr;
    const bool decidable = rec && rec->status != "baseline" && rec->status != "running";
    m_acceptButton->setEnabled(decidable);
    m_rejectButton->setEnabled(decidable);
    m_acceptAction->setEnabled(decidable);
    m_rejectAction->setEnabled(decidable);
    m_reason->setEnabled(decidable);
    if (!rec) {
        m_decision->clear();
        return;
    }
    if (const auto *d = snap->userDecision(m_shown)) {
        const bool accepted = d->decision == "accept";
        m_decision->setText(QStringLiteral("<span style=\"color:%1\"><b>%2 by %3</b></span>: %4")
                                .arg(htmlColour(accepted ? theme(palette()).good : theme(palette()).bad),
                                     accepted ? QStringLiteral("Accepted") : QStringLiteral("Rejected"),
                                     QString::fromStdString(d->actor).toHtmlEscaped(),
                                     QString::fromStdString(d->reason).toHtmlEscaped()));
    } else if (decidable) {
        m_decision->setText(QStringLiteral("The guard's decision stands: %1. Press A or R to overrule or confirm it.")
                                .arg(statusStyle(rec->status).label.toHtmlEscaped()));
    } else {
        m_decision->setText(rec->status == "baseline" ? QStringLiteral("The baseline is not accepted or rejected.")
                                                      : QStringLiteral("Decide once the verdict is in."));
    }
}

void NodeInspector::beginDecision(const QString &decision)
{
    if (!m_acceptButton->isEnabled())
        return;
    if (!m_reason->text().trimmed().isEmpty()) {
        commitDecision(decision);
        return;
    }
    m_pendingDecision = decision;
    m_reason->setPlaceholderText(QStringLiteral("Why %1 #%2? Type the reason, then Enter")
                                     .arg(decision == QLatin1String("accept") ? QStringLiteral("accept") : QStringLiteral("reject"))
                                     .arg(m_shown));
    m_reason->setFocus(Qt::ShortcutFocusReason);
}

void NodeInspector::commitDecision(const QString &decision)
{
    const QString reason = m_reason->text().trimmed();
    if (reason.isEmpty()) {
        beginDecision(decision);
        return;
    }
    const QString error = m_context->decide(m_shown, decision, reason);
    if (!error.isEmpty()) {
        m_decision->setText(QStringLiteral("<span style=\"color:%1\">Not recorded: %2</span>")
                                .arg(htmlColour(theme(palette()).bad), error.toHtmlEscaped()));
        emit message(QStringLiteral("Decision not recorded: ") + error);
        return;
    }
    m_pendingDecision.clear();
    m_reason->clear();
    m_reason->setPlaceholderText(QStringLiteral("Reason (required), then Accept or Reject"));
    emit message(QStringLiteral("%1 #%2: %3").arg(decision == QLatin1String("accept") ? QStringLiteral("Accepted") : QStringLiteral("Rejected"))
                     .arg(m_shown)
                     .arg(reason));
}

// One small indexed query; it runs on the GUI thread because it takes a few milliseconds even for
// large sessions, and a thread hop would only add latency to the click.
void NodeInspector::showNode(qint64 id)
{
    if (id != m_shown) {
        m_pendingDecision.clear();
        m_reason->clear();
    }
    m_shown = id;
    m_shownStatus.clear();
    m_shownSource.clear();
    // Nothing from the previous node may survive into this one's tabs.
    m_verdict->clear();
    m_compileLog->clear();
    m_plan->clear();
    m_params->clear();
    m_profile->clear();
    m_llm->showMessage(QStringLiteral("No LLM calls made this node."));
    m_tabs->setTabVisible(m_tabs->indexOf(m_llm), false);
    showDecision();
    const auto &snap = m_context->snapshot();
    const NodeRecord *rec = snap ? snap->node(id) : nullptr;
    if (!rec) {
        showMessage(snap ? QStringLiteral("Click a node in the tree to inspect it.") : QStringLiteral("No session open."));
        updateDiff();
        return;
    }
    m_shownStatus = rec->status;
    showLlmCalls(id);

    QString head = QStringLiteral("<b>#%1</b> %2").arg(id).arg(QString::fromStdString(rec->templateId).toHtmlEscaped());
    if (rec->parentId)
        head += QStringLiteral(" · %1 of #%2").arg(QString::fromStdString(rec->expansion)).arg(*rec->parentId);
    if (!rec->summary.empty())
        head += QStringLiteral("<br><small>%1</small>").arg(QString::fromStdString(rec->summary).toHtmlEscaped());
    // Why the search made this node (the selection's scores stored with it), and a dead end's reason.
    if (const auto why = explainSelection(rec->selection); !why.empty())
        head += QStringLiteral("<br><small>%1</small>").arg(QString::fromStdString(why).toHtmlEscaped());
    if (!rec->pruned.empty())
        head += QStringLiteral("<br><small>Pruned: %1</small>").arg(QString::fromStdString(rec->pruned).toHtmlEscaped());
    m_heading->setText(head);
    m_params->setPlainText(QString::fromStdString(rec->params.dump(2)));

    // The baseline and nodes still in flight have no verdict to read yet.
    if (rec->status == "baseline" || rec->status == "running") {
        const auto &ops = snap->operators();
        auto op = std::find_if(ops.begin(), ops.end(), [&](const OperatorRecord &o) { return o.id == rec->operatorId; });
        if (rec->status == "baseline" && op != ops.end())
            m_code->setText(QString::fromStdString(baselineComment(op->card)));
        else
            m_code->setText(QString());
        const QString none = rec->status == "baseline" ? QStringLiteral("The baseline is ATen's own kernel: nothing to show here.")
                                                       : QStringLiteral("Being evaluated.");
        m_profile->setPlainText(none);
        m_plan->setPlainText(none);
        m_verdict->showRecord(*rec, rec->status == "baseline" ? QStringLiteral("every candidate is timed against this")
                                                              : QStringLiteral("being evaluated"));
        if (rec->status == "baseline" || !m_store) {
            updateDiff();
            return;
        }
    }

    if (!m_store) {
        m_verdict->showRecord(*rec, m_storeError);
        updateDiff();
        return;
    }
    std::optional<NodeDetail> detail;
    try {
        detail = m_store->nodeDetail(id);
    } catch (const std::exception &e) {
        m_verdict->showRecord(*rec, QString::fromStdString(e.what()));
        updateDiff();
        return;
    }
    if (!detail) {
        m_verdict->showRecord(*rec, QStringLiteral("this node is not in the file yet"));
        updateDiff();
        return;
    }
    m_shownSource = detail->candidate.source;
    m_code->setText(QString::fromStdString(detail->candidate.source));
    m_plan->setPlainText(formatLaunchPlan(detail->candidate.backend, detail->candidate.launch));
    updateDiff();
    if (rec->status == "running")
        return; // code only; the verdict follows when the node finishes
    m_verdict->showDetail(*detail);
    const auto &c = detail->verdict.compile;
    QString log = QStringLiteral("target %1, %2, %3 ms%4\n\n")
                      .arg(QString::fromStdString(c.target), c.ok ? QStringLiteral("compiled") : QStringLiteral("failed"))
                      .arg(c.millis, 0, 'f', 1)
                      .arg(c.cached ? QStringLiteral(" (cached)") : QString());
    m_compileLog->setHtml(linkCompileLog(log + QString::fromStdString(c.log)));
    m_profile->setPlainText(formatProfile(detail->profile));
    // A compile error is explained by the log, so bring it forward; otherwise keep the user's tab.
    if (rec->status == "compile_error")
        m_tabs->setCurrentWidget(m_compileLog);
}

bool NodeInspector::llmTabVisible() const
{
    return m_tabs->isTabVisible(m_tabs->indexOf(m_llm));
}

// The calls are attached when the proposal is stored, so a node still being evaluated has them too.
void NodeInspector::showLlmCalls(qint64 id)
{
    if (!m_llmLog)
        return;
    try {
        auto calls = m_llmLog->nodeCalls(id);
        m_tabs->setTabVisible(m_tabs->indexOf(m_llm), !calls.empty());
        m_llm->showCalls(std::move(calls));
    } catch (const std::exception &e) {
        m_llm->showMessage(QStringLiteral("Could not read the LLM calls: %1").arg(QString::fromStdString(e.what())));
    }
}

// The diff is computed on a pool thread (a long kernel against a long kernel is a character diff per
// changed line); a result for a node no longer shown is dropped.
void NodeInspector::updateDiff()
{
    const quint64 job = ++m_diffJob;
    const auto &snap = m_context->snapshot();
    const NodeRecord *rec = snap ? snap->node(m_shown) : nullptr;
    if (!rec || rec->status == "baseline") {
        m_diff->showMessage(rec ? QStringLiteral("The baseline is ATen's own kernel: select a candidate to compare.")
                                : QStringLiteral("Select a node to compare it with its parent."));
        return;
    }
    const qint64 base = m_diffBase->value() ? m_diffBase->value() : rec->parentId.value_or(0);
    const NodeRecord *baseRec = snap->node(base);
    if (!baseRec || base == m_shown) {
        m_diff->showMessage(base == m_shown ? QStringLiteral("Choose another node than #%1 to compare with.").arg(base)
                                            : QStringLiteral("There is no node #%1 in this session.").arg(base));
        return;
    }
    if (baseRec->status == "baseline") {
        m_diff->showMessage(QStringLiteral("#%1's parent is the baseline, ATen's own kernel, which has no source here. "
                                           "Choose a node to compare with.")
                                .arg(m_shown));
        return;
    }
    std::string baseSource;
    try {
        if (const auto d = m_store ? m_store->nodeDetail(base) : std::nullopt)
            baseSource = d->candidate.source;
    } catch (const std::exception &e) {
        m_diff->showMessage(QString::fromStdString(e.what()));
        return;
    }
    const QString leftTitle = QStringLiteral("#%1 %2").arg(base).arg(QString::fromStdString(baseRec->templateId));
    const QString rightTitle = QStringLiteral("#%1 %2").arg(m_shown).arg(QString::fromStdString(rec->templateId));
    QtConcurrent::run([job, left = std::move(baseSource), right = m_shownSource] { return DiffResult{job, diffRows(left, right)}; })
        .then(this, [this, leftTitle, rightTitle](const DiffResult &r) {
            if (r.job != m_diffJob)
                return;
            m_diff->setRows(r.rows, leftTitle, rightTitle);
            emit diffReady();
        });
}

void NodeInspector::refreshIfChanged()
{
    const auto &snap = m_context->snapshot();
    const NodeRecord *rec = snap && m_shown ? snap->node(m_shown) : nullptr;
    if (rec && rec->status != m_shownStatus)
        showNode(m_shown);
    else
        showDecision();
}

} // namespace kforge::ui
