// kforge: the desktop inspector. Opens a session file, or runs a live demo search, and can save a
// screenshot of itself for documentation.
#include <QApplication>
#include <QDialog>
#include <QFileInfo>
#include <QIcon>
#include <QPixmap>
#include <QScreen>
#include <QSettings>
#include <QToolTip>
#include <QTimer>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "ui/main_window.h"
#include "ui/node_inspector.h"
#include "ui/node_item.h"
#include "ui/session_context.h"
#include "ui/theme.h"
#include "ui/timeline_view.h"
#include "ui/tree_view.h"
#include "ui/workload_context.h"
#include "ui/workload_panels.h"

namespace {

const char *kUsage =
    "usage: kforge [SESSION_FILE] [options]\n"
    "\n"
    "Inspects kforge search sessions: the family tree of kernel candidates, their code, verdicts,\n"
    "compile logs and timings.\n"
    "\n"
    "  SESSION_FILE              a session to open read-only; with --demo, the file the search writes\n"
    "  --demo                    start a live search on the built-in demo workload (offline templates)\n"
    "  --resume                  go on with SESSION_FILE's stopped search (Search > Resume)\n"
    "  --nodes N                 candidates the demo search evaluates (default: Settings, 24)\n"
    "  --workers N               worker processes (default: Settings, 1)\n"
    "  --worker CMD              command line that starts a worker (default: Settings, else kforge-worker\n"
    "                            beside kforge)\n"
    "  --select NODE             select this node instead of the best one\n"
    "  --panel NAME              bring a panel forward: code, diff, verdict, compile-log, launch-plan,\n"
    "                            parameters, profile, llm (an LLM node's calls)\n"
    "  --diff-base NODE          compare the selected node with NODE instead of its parent\n"
    "  --compare N,M[,...]       set these nodes side by side in the Compare panel\n"
    "  --filter-status S         dim the nodes whose status is not S (accepted, incorrect, ...)\n"
    "  --filter-template T       dim the nodes not made from template T\n"
    "  --filter-hide             hide what the filter passes over instead of dimming it\n"
    "  --settings                open the Settings dialog\n"
    "  --campaign WORKLOAD       open Search > Start campaign's plan for a profiled workload file\n"
    "  --palette P               system (default: the desktop's), light or dark; saved as the default\n"
    "  --workload FILE           show a profiled workload's timeline and operator table\n"
    "  --workload-after FILE     a second profile of it, run with a pack, under the first\n"
    "  --operator KEY            select this card of the workload (its calls outlined)\n"
    "  --timeline-range A,B      show milliseconds A to B of the workload's timeline\n"
    "  --hover NODE              show NODE's hover card (the screenshot then shows the whole screen\n"
    "                            around the window, where the card is)\n"
    "  --screenshot FILE         save a picture of the window to FILE (PNG) and quit\n"
    "  --screenshot-after-ms MS  when to take it (default 3000)\n"
    "  --version                 print the version\n"
    "  --help                    show this text\n";

struct Args {
    std::optional<std::string> session;
    bool demo = false;
    bool resume = false;
    std::optional<int> nodes;
    std::optional<int> workers;
    std::optional<std::string> worker;
    std::string screenshot;
    int screenshotAfterMs = 3000;
    int select = 0;
    int diffBase = 0;
    std::string panel;
    std::vector<int> compare;
    std::string filterStatus;
    std::string filterTemplate;
    bool filterHide = false;
    bool settings = false;
    std::string campaign, palette;
    std::string workload, workloadAfter, operatorKey;
    std::vector<double> timelineRange; // ms
    int hover = 0;
    bool help = false;
    bool version = false;
};


int toInt(const char *option, const char *value, int min)
{
    try {
        size_t used = 0;
        const int v = std::stoi(value, &used);
        if (used == std::strlen(value) && v >= min)
            return v;
    } catch (...) {
    }
    throw std::runtime_error(std::string("option ") + option + " needs a whole number of at least " + std::to_string(min) +
                             ", not '" + value + "'");
}

std::vector<int> toIntList(const char *option, const std::string &value)
{
    std::vector<int> out;
    size_t start = 0;
    while (start <= value.size()) {
        const size_t end = std::min(value.find(',', start), value.size());
        out.push_back(toInt(option, value.substr(start, end - start).c_str(), 1));
        start = end + 1;
    }
    if (out.size() < 2)
        throw std::runtime_error(std::string("option ") + option + " needs two or more node ids separated by commas");
    return out;
}

// Parsed before QApplication exists, so --help and mistakes are reported without a display.
Args parse(int argc, char **argv)
{
    Args a;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&]() -> const char * {
            if (i + 1 >= argc)
                throw std::runtime_error("option " + arg + " needs a value");
            return argv[++i];
        };
        if (arg == "--help" || arg == "-h")
            a.help = true;
        else if (arg == "--version")
            a.version = true;
        else if (arg == "--compare")
            a.compare = toIntList("--compare", value());
        else if (arg == "--filter-status")
            a.filterStatus = value();
        else if (arg == "--filter-template")
            a.filterTemplate = value();
        else if (arg == "--filter-hide")
            a.filterHide = true;
        else if (arg == "--settings")
            a.settings = true;
        else if (arg == "--campaign")
            a.campaign = value();
        else if (arg == "--palette") {
            a.palette = value();
            if (a.palette != "system" && a.palette != "light" && a.palette != "dark")
                throw std::runtime_error("option --palette takes system, light or dark, not '" + a.palette + "'");
        }
        else if (arg == "--workload")
            a.workload = value();
        else if (arg == "--workload-after")
            a.workloadAfter = value();
        else if (arg == "--operator")
            a.operatorKey = value();
        else if (arg == "--timeline-range") {
            const std::string v = value();
            const auto comma = v.find(',');
            try {
                a.timelineRange = {std::stod(v.substr(0, comma)), std::stod(v.substr(comma + 1))};
            } catch (...) {
                a.timelineRange.clear();
            }
            if (comma == std::string::npos || a.timelineRange.size() != 2 || !(a.timelineRange[1] > a.timelineRange[0]))
                throw std::runtime_error("option --timeline-range needs two times in milliseconds, the first smaller: 120,160");
        }
        else if (arg == "--hover")
            a.hover = toInt("--hover", value(), 1);
        else if (arg == "--demo")
            a.demo = true;
        else if (arg == "--resume")
            a.resume = true;
        else if (arg == "--nodes")
            a.nodes = toInt("--nodes", value(), 1);
        else if (arg == "--workers")
            a.workers = toInt("--workers", value(), 1);
        else if (arg == "--worker")
            a.worker = value();
        else if (arg == "--select")
            a.select = toInt("--select", value(), 1);
        else if (arg == "--diff-base")
            a.diffBase = toInt("--diff-base", value(), 1);
        else if (arg == "--panel")
            a.panel = value();
        else if (arg == "--screenshot")
            a.screenshot = value();
        else if (arg == "--screenshot-after-ms")
            a.screenshotAfterMs = toInt("--screenshot-after-ms", value(), 0);
        else if (!arg.empty() && arg[0] == '-')
            throw std::runtime_error("unknown option '" + arg + "' (see --help)");
        else if (a.session)
            throw std::runtime_error("only one session file, not '" + *a.session + "' and '" + arg + "'");
        else
            a.session = arg;
    }
    return a;
}

} // namespace

int main(int argc, char **argv)
{
    Args args;
    try {
        args = parse(argc, argv);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "kforge: %s\n", e.what());
        return 2;
    }
    if (args.help) {
        std::fputs(kUsage, stdout);
        return 0;
    }
    if (args.version) {
        std::printf("kforge %s\n", KFORGE_VERSION);
        return 0;
    }

    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("kforge"));
    QApplication::setOrganizationName(QStringLiteral("kforge"));
    QApplication::setApplicationVersion(QStringLiteral(KFORGE_VERSION));
    QGuiApplication::setDesktopFileName(QStringLiteral("org.kforge.kforge"));
    QApplication::setWindowIcon(QIcon::fromTheme(QStringLiteral("org.kforge.kforge"), QIcon(QStringLiteral(":/icons/kforge.png"))));
    // The desktop's palette unless the person chose one (--palette, kept in the settings).
    {
        QSettings settings;
        if (!args.palette.empty())
            settings.setValue(QStringLiteral("appearance/palette"), QString::fromStdString(args.palette));
        const QString choice = settings.value(QStringLiteral("appearance/palette"), QStringLiteral("system")).toString();
        if (const QString error = kforge::ui::applyPaletteChoice(app, choice); !error.isEmpty())
            std::fprintf(stderr, "kforge: settings: %s; using the system's\n", error.toLocal8Bit().constData());
    }

    kforge::ui::MainWindow window;
    window.resize(1500, 900);
    if (args.nodes || args.workers || args.worker) { // for this run only; the saved settings stay
        const auto &saved = window.searchSettings();
        window.setDemoSettings(args.nodes.value_or(saved.nodes), args.workers.value_or(saved.workers),
                               args.worker ? QString::fromStdString(*args.worker) : saved.workerCommand);
    }
    window.show();

    int status = 0;
    if (args.demo) {
        const auto &settings = window.searchSettings();
        auto request = kforge::ui::SearchRequest::demo(settings.nodes, settings.workers);
        request.workerCommand = settings.workerCommand;
        request.backend = settings.backend;
        request.proposer = settings.proposer.choice();
        if (args.session)
            request.sessionPath = QString::fromStdString(*args.session);
        window.startSearch(request);
    } else if (args.session) {
        const QString path = QString::fromStdString(*args.session);
        const QString error = window.openSession(path);
        if (!error.isEmpty()) {
            std::fprintf(stderr, "kforge: %s\n", error.toLocal8Bit().constData());
            if (!args.screenshot.empty())
                return 1;
            // Say it in the window too, where the person who double-clicked a file is looking, and
            // offer the upgrade where one would help.
            QTimer::singleShot(0, &window, [&window, path] { window.openSessionInteractively(path); });
        } else if (args.resume && !window.resumeSearch()) {
            std::fprintf(stderr, "kforge: cannot resume %s: %s\n", path.toLocal8Bit().constData(),
                         window.lastSearchError().toLocal8Bit().constData());
            return 1;
        }
    }

    if (!args.workload.empty()) {
        auto *panels = window.workloadPanels();
        QString error = panels->openAndWait(QString::fromStdString(args.workload));
        if (error.isEmpty() && !args.workloadAfter.empty())
            error = panels->openAndWait(QString::fromStdString(args.workloadAfter), true);
        if (!error.isEmpty()) {
            std::fprintf(stderr, "kforge: %s\n", error.toLocal8Bit().constData());
            if (!args.screenshot.empty())
                return 1;
        }
        if (!args.operatorKey.empty())
            panels->context()->selectCard(QString::fromStdString(args.operatorKey));
        if (!args.timelineRange.empty()) // once the docks have their size
            QTimer::singleShot(0, &window, [panels, r = args.timelineRange] { panels->timeline()->showRange(r[0] * 1000, r[1] * 1000); });
    }

    // What to show once the session is there: for documentation and for links from other tools.
    auto present = [&window, args] {
        if (args.select)
            window.context()->select(args.select);
        if (args.diffBase)
            window.inspector()->setDiffBase(args.diffBase);
        if (!args.panel.empty() && !window.inspector()->showPanel(QString::fromStdString(args.panel)))
            std::fprintf(stderr, "kforge: no panel '%s' (see --help)\n", args.panel.c_str());
        if (!args.compare.empty()) {
            QList<qint64> ids;
            for (int id : args.compare)
                ids.append(id);
            window.context()->setCompared(ids);
        }
        if (!args.filterStatus.empty() || !args.filterTemplate.empty() || args.filterHide)
            window.applyFilter(QString::fromStdString(args.filterStatus), QString::fromStdString(args.filterTemplate),
                               args.filterHide);
        if (args.settings)
            window.openSettingsDialog();
        if (!args.campaign.empty())
            window.openCampaignDialog(QString::fromStdString(args.campaign));
        if (args.hover)
            QTimer::singleShot(300, &window, [&window, id = args.hover] {
                auto *tree = window.treeView();
                if (auto *item = tree->nodeItem(id)) {
                    tree->ensureVisible(item);
                    const QPoint at = tree->viewport()->mapToGlobal(tree->mapFromScene(item->scenePos()) + QPoint(12, 12));
                    QToolTip::showText(at, item->toolTip(), tree->viewport(), QRect(), 60000);
                } else {
                    std::fprintf(stderr, "kforge: no node %d to hover\n", id);
                }
            });
    };
    if ((args.session && !args.demo) || (!args.session && !args.campaign.empty()))
        present();

    if (!args.screenshot.empty()) {
        const QString file = QString::fromStdString(args.screenshot);
        QTimer::singleShot(args.screenshotAfterMs, &window, [&window, &status, file, present, &args] {
            // A picture of the inspector empty says little: show the best node found so far.
            if (window.context()->selectedNode() == 0)
                window.selectBestNode();
            if (args.demo)
                present();
            QTimer::singleShot(args.hover ? 600 : 200, &window, [&window, &status, file, hover = args.hover] {
                // A dialog on top is its own window: picture it instead, it is what was asked for. A
                // hover card is a window of its own too: then the screen is pictured.
                QWidget *target = &window;
                for (const auto *name : {"settingsDialog", "campaignDialog"})
                    if (auto *dialog = window.findChild<QDialog *>(QString::fromLatin1(name)); dialog && dialog->isVisible())
                        target = dialog;
                const QPixmap picture = hover ? window.screen()->grabWindow(0, window.frameGeometry().x(), window.frameGeometry().y(),
                                                                            window.frameGeometry().width(),
                                                                            window.frameGeometry().height())
                                              : target->grab();
                if (picture.save(file)) {
                    std::printf("kforge: saved %s\n", QFileInfo(file).absoluteFilePath().toLocal8Bit().constData());
                } else {
                    std::fprintf(stderr, "kforge: cannot write screenshot '%s'\n", file.toLocal8Bit().constData());
                    status = 1;
                }
                QApplication::exit(status);
            });
        });
    }
    const int rc = QApplication::exec();
    return status ? status : rc;
}
