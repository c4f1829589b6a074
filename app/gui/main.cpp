// kforge: the desktop inspector. Opens a session file, or runs a live demo search, and can save a
// screenshot of itself for documentation.
#include <QApplication>
#include <QFileInfo>
#include <QTimer>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "ui/main_window.h"
#include "ui/node_inspector.h"
#include "ui/session_context.h"

namespace {

const char *kUsage =
    "usage: kforge [SESSION_FILE] [options]\n"
    "\n"
    "Inspects kforge search sessions: the family tree of kernel candidates, their code, verdicts,\n"
    "compile logs and timings.\n"
    "\n"
    "  SESSION_FILE              a session to open read-only; with --demo, the file the search writes\n"
    "  --demo                    start a live search on the built-in demo workload (offline templates)\n"
    "  --nodes N                 candidates the demo search evaluates (default 24)\n"
    "  --workers N               worker processes (default 1)\n"
    "  --worker CMD              command line that starts a worker (default: kforge-worker beside kforge)\n"
    "  --select NODE             select this node instead of the best one\n"
    "  --panel NAME              bring a panel forward: code, diff, verdict, compile-log, launch-plan,\n"
    "                            parameters, profile\n"
    "  --diff-base NODE          compare the selected node with NODE instead of its parent\n"
    "  --screenshot FILE         save a picture of the window to FILE (PNG) and quit\n"
    "  --screenshot-after-ms MS  when to take it (default 3000)\n"
    "  --help                    show this text\n";

struct Args {
    std::optional<std::string> session;
    bool demo = false;
    int nodes = 24;
    int workers = 1;
    std::string worker;
    std::string screenshot;
    int screenshotAfterMs = 3000;
    int select = 0;
    int diffBase = 0;
    std::string panel;
    bool help = false;
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
        else if (arg == "--demo")
            a.demo = true;
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

    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("kforge"));
    QApplication::setOrganizationName(QStringLiteral("kforge"));

    kforge::ui::MainWindow window;
    window.resize(1500, 900);
    window.setDemoSettings(args.nodes, args.workers, QString::fromStdString(args.worker));
    window.show();

    int status = 0;
    if (args.demo) {
        auto request = kforge::ui::SearchRequest::demo(args.nodes, args.workers);
        request.workerCommand = QString::fromStdString(args.worker);
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
        }
    }

    // What to show once the session is there: for documentation and for links from other tools.
    auto present = [&window, args] {
        if (args.select)
            window.context()->select(args.select);
        if (args.diffBase)
            window.inspector()->setDiffBase(args.diffBase);
        if (!args.panel.empty() && !window.inspector()->showPanel(QString::fromStdString(args.panel)))
            std::fprintf(stderr, "kforge: no panel '%s' (see --help)\n", args.panel.c_str());
    };
    if (args.session && !args.demo)
        present();

    if (!args.screenshot.empty()) {
        const QString file = QString::fromStdString(args.screenshot);
        QTimer::singleShot(args.screenshotAfterMs, &window, [&window, &status, file, present, &args] {
            // A picture of the inspector empty says little: show the best node found so far.
            if (window.context()->selectedNode() == 0)
                window.selectBestNode();
            if (args.demo)
                present();
            QTimer::singleShot(200, &window, [&window, &status, file] {
                if (window.grab().save(file)) {
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
