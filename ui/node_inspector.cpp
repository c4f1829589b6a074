#include "ui/node_inspector.h"

#include <Qsci/qscilexercpp.h>
#include <Qsci/qsciscintilla.h>
#include <QFontDatabase>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QTabWidget>
#include <QVBoxLayout>
#include <algorithm>

#include "store/session_store.h"
#include "ui/session_context.h"
#include "ui/status_style.h"
#include "ui/verdict_pane.h"
#include "util/error.h"

namespace kforge::ui {

namespace {

QsciScintilla *makeCodeView(QWidget *parent)
{
    auto *code = new QsciScintilla(parent);
    auto *lexer = new QsciLexerCPP(code);
    const QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    lexer->setDefaultFont(mono);
    lexer->setFont(mono); // every style, or comments fall back to a proportional font
    code->setLexer(lexer);
    // Scintilla evaluates #if against the file's own #defines and greys out what it thinks is dead;
    // templates pick branches with macros it misjudges, so show every branch as live code.
    code->SendScintilla(QsciScintillaBase::SCI_SETPROPERTY, "lexer.cpp.track.preprocessor", "0");
    code->setReadOnly(true);
    code->setUtf8(true);
    code->setMarginType(0, QsciScintilla::NumberMargin);
    code->setMarginWidth(0, QStringLiteral("00000"));
    code->setMarginsFont(mono);
    code->setWrapMode(QsciScintilla::WrapNone);
    code->setCaretLineVisible(false);
    code->setTabWidth(4);
    return code;
}

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

} // namespace

NodeInspector::NodeInspector(SessionContext *context, QWidget *parent)
    : QWidget(parent), m_context(context), m_heading(new QLabel(this)), m_code(makeCodeView(this)),
      m_tabs(new QTabWidget(this)), m_verdict(new VerdictPane(this)), m_compileLog(makeTextView(this)),
      m_params(makeTextView(this)), m_profile(makeTextView(this))
{
    m_heading->setTextFormat(Qt::RichText);
    m_heading->setWordWrap(true);
    m_heading->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_heading->setContentsMargins(6, 4, 6, 4);

    m_tabs->addTab(m_verdict, QStringLiteral("Verdict"));
    m_tabs->addTab(m_compileLog, QStringLiteral("Compile log"));
    m_tabs->addTab(m_params, QStringLiteral("Parameters"));
    m_tabs->addTab(m_profile, QStringLiteral("Profile"));

    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_code);
    split->addWidget(m_tabs);
    split->setStretchFactor(0, 5); // the code is what people read most
    split->setStretchFactor(1, 4);
    split->setChildrenCollapsible(false);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_heading);
    layout->addWidget(split, 1);

    connect(context, &SessionContext::sessionLoaded, this, &NodeInspector::openStore);
    connect(context, &SessionContext::sessionClosed, this, [this] {
        m_store.reset();
        showNode(0);
    });
    connect(context, &SessionContext::selectionChanged, this, &NodeInspector::showNode);
    connect(context, &SessionContext::nodesChanged, this, &NodeInspector::refreshIfChanged);
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

QString NodeInspector::heading() const
{
    return m_heading->text();
}

void NodeInspector::openStore()
{
    m_store.reset();
    m_storeError.clear();
    try {
        m_store = std::make_unique<SessionStore>(m_context->sessionPath().toStdString(), SessionStore::Mode::ReadOnly);
    } catch (const std::exception &e) {
        m_storeError = QString::fromStdString(e.what());
    }
    showNode(m_context->selectedNode());
}

void NodeInspector::showMessage(const QString &text)
{
    m_heading->setText(text.toHtmlEscaped());
    m_code->setText(QString());
    m_verdict->clear();
    m_compileLog->clear();
    m_params->clear();
}

// One small indexed query; it runs on the GUI thread because it takes a few milliseconds even for
// large sessions, and a thread hop would only add latency to the click.
void NodeInspector::showNode(qint64 id)
{
    m_shown = id;
    m_shownStatus.clear();
    const auto &snap = m_context->snapshot();
    const NodeRecord *rec = snap ? snap->node(id) : nullptr;
    if (!rec) {
        showMessage(snap ? QStringLiteral("Click a node in the tree to inspect it.") : QStringLiteral("No session open."));
        return;
    }
    m_shownStatus = rec->status;

    QString head = QStringLiteral("<b>#%1</b> %2").arg(id).arg(QString::fromStdString(rec->templateId).toHtmlEscaped());
    if (rec->parentId)
        head += QStringLiteral(" · %1 of #%2").arg(QString::fromStdString(rec->expansion)).arg(*rec->parentId);
    if (!rec->summary.empty())
        head += QStringLiteral("<br><small>%1</small>").arg(QString::fromStdString(rec->summary).toHtmlEscaped());
    m_heading->setText(head);
    m_params->setPlainText(QString::fromStdString(rec->params.dump(2)));

    // The baseline and nodes still in flight have no verdict to read yet.
    if (rec->status == "baseline" || rec->status == "running") {
        const auto &ops = snap->operators();
        auto op = std::find_if(ops.begin(), ops.end(), [&](const OperatorRecord &o) { return o.id == rec->operatorId; });
        if (rec->status == "baseline" && op != ops.end())
            m_code->setText(QStringLiteral("// The baseline: the ATen operator itself, called through the dispatcher.\n// %1\n")
                                .arg(QString::fromStdString(op->card.atenSchema)));
        else
            m_code->setText(QString());
        m_compileLog->clear();
        m_verdict->showRecord(*rec, rec->status == "baseline" ? QStringLiteral("every candidate is timed against this")
                                                              : QStringLiteral("being evaluated"));
        if (rec->status == "baseline" || !m_store)
            return;
    }

    if (!m_store) {
        m_verdict->showRecord(*rec, m_storeError);
        return;
    }
    std::optional<NodeDetail> detail;
    try {
        detail = m_store->nodeDetail(id);
    } catch (const std::exception &e) {
        m_verdict->showRecord(*rec, QString::fromStdString(e.what()));
        return;
    }
    if (!detail) {
        m_verdict->showRecord(*rec, QStringLiteral("this node is not in the file yet"));
        return;
    }
    m_code->setText(QString::fromStdString(detail->candidate.source));
    if (rec->status == "running")
        return; // code only; the verdict follows when the node finishes
    m_verdict->showDetail(*detail);
    const auto &c = detail->verdict.compile;
    QString log = QStringLiteral("target %1, %2, %3 ms%4\n\n")
                      .arg(QString::fromStdString(c.target), c.ok ? QStringLiteral("compiled") : QStringLiteral("failed"))
                      .arg(c.millis, 0, 'f', 1)
                      .arg(c.cached ? QStringLiteral(" (cached)") : QString());
    m_compileLog->setPlainText(log + QString::fromStdString(c.log));
    m_profile->setPlainText(formatProfile(detail->profile));
    // A compile error is explained by the log, so bring it forward; otherwise keep the user's tab.
    if (rec->status == "compile_error")
        m_tabs->setCurrentWidget(m_compileLog);
}

void NodeInspector::refreshIfChanged()
{
    const auto &snap = m_context->snapshot();
    const NodeRecord *rec = snap && m_shown ? snap->node(m_shown) : nullptr;
    if (rec && rec->status != m_shownStatus)
        showNode(m_shown);
}

} // namespace kforge::ui
