// kforge-gui-bench: how the inspector copes with a large session. Writes a 10,000-node session through
// SessionStore (in a child process, so the figures below are the window's alone), opens it in a
// MainWindow, and measures:
//   - time to first paint: openSession() (read, snapshot, layout, scene) until the tree's viewport has
//     been painted once;
//   - frame times: the tree view rendered into an offscreen image while its transform changes (the
//     whole tree fitted, a zoom sweep from fitted to 1:1, a pan across the tree at 1:1);
//   - peak memory: VmHWM from /proc/self/status.
//   - the longest stall of the event loop from openSession() until every node has its item and the
//     tree has been painted (a 5 ms timer's longest gap, as the widget tests measure it);
// Targets (bench/RESULTS-gui.md): first paint under 1 s, every frame under 33 ms, no stall over 50 ms.
//
//   kforge-gui-bench [--nodes N] [--frames N] [--keep FILE]
#include <QApplication>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QImage>
#include <QTimer>
#include <QTemporaryDir>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "ops/operator_card.h"
#include "tests/stall_meter.h"
#include "store/session_store.h"
#include "workload/workload_file.h"
#include "ui/main_window.h"
#include "ui/node_item.h"
#include "ui/session_context.h"
#include "ui/timeline_view.h"
#include "ui/tree_view.h"
#include "ui/workload_context.h"
#include "ui/workload_panels.h"
#include "ui/workload_profile.h"

using namespace kforge;

namespace {

long statusKb(const char *key)
{
    std::ifstream in("/proc/self/status");
    for (std::string line; std::getline(in, line);)
        if (line.rfind(key, 0) == 0)
            return std::atol(line.c_str() + std::strlen(key));
    return -1;
}

// A tree shaped like a search's: most children go to the better nodes, some to failures (repairs),
// statuses in the proportions a CPU search shows, ten timing samples per side.
void writeSession(const std::string &path, int nodes)
{
    SessionStore s(path);
    const auto sid = s.createSession({0, "gui bench", "demo-attention", "cpu", "templates", "finished", {{"nodes", nodes}}, nowSeconds()});
    const auto op = s.addOperator(sid, makeSoftmaxCard(256, 1024));
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(0, 1);
    struct Made {
        int64_t id;
        double score;
    };
    std::vector<Made> made;
    NodeRecord root;
    root.sessionId = sid;
    root.operatorId = op;
    root.status = "baseline";
    root.templateId = "aten";
    made.push_back({s.addNode(root, Candidate{"reference", "aten::_softmax", nlohmann::json::object()}), 1.0});
    const char *templates[] = {"cpu.softmax.vector", "cpu.softmax.online", "cpu.softmax.three_pass", "cpu.softmax.blocked"};
    for (int i = 1; i < nodes; ++i) {
        // Parents by a tournament on score: good nodes grow wide subtrees, as UCT makes them.
        const Made *parent = &made[size_t(rng() % made.size())];
        for (int k = 0; k < 3; ++k) {
            const Made *other = &made[size_t(rng() % made.size())];
            if (other->score > parent->score)
                parent = other;
        }
        NodeRecord n;
        n.sessionId = sid;
        n.operatorId = op;
        n.parentId = parent->id;
        n.expansion = u(rng) < 0.2 ? "repair" : "improve";
        n.templateId = templates[rng() % 4];
        n.params = {{"lanes", 1 << (rng() % 5)}};
        n.summary = "bench node";
        const auto id = s.addNode(n, Candidate{"cpu", "// bench kernel " + std::to_string(i) + "\nextern \"C\" int kforge_entry();",
                                               nlohmann::json::object()});
        Verdict v;
        const double r = u(rng);
        v.status = r < 0.25 ? VerdictStatus::Accepted : r < 0.5 ? VerdictStatus::NotFaster : r < 0.8 ? VerdictStatus::Incorrect
                                                        : r < 0.95 ? VerdictStatus::CompileError : VerdictStatus::Crashed;
        const bool timed = v.status == VerdictStatus::Accepted || v.status == VerdictStatus::NotFaster;
        v.speedup = timed ? (v.status == VerdictStatus::Accepted ? 1.05 + u(rng) : 0.5 + 0.5 * u(rng)) : 0;
        v.rooflineUs = 8.4;
        if (timed)
            for (int k = 0; k < 10; ++k) {
                v.baseline.samplesUs.push_back(21 + u(rng));
                v.candidate.samplesUs.push_back((21 + u(rng)) / v.speedup);
            }
        v.compile = {v.status != VerdictStatus::CompileError, false, 300, "g++ -O3", "x86_64-g++-O3"};
        s.finishNode(id, v, timed ? std::log(v.speedup) : -1);
        made.push_back({id, timed ? v.speedup : 0.2});
    }
    s.setSessionStatus(sid, "finished");
}

struct Frames {
    std::vector<double> ms;
    double median() const
    {
        auto v = ms;
        std::sort(v.begin(), v.end());
        return v.empty() ? 0 : v[v.size() / 2];
    }
    double p95() const
    {
        auto v = ms;
        std::sort(v.begin(), v.end());
        return v.empty() ? 0 : v[std::min(v.size() - 1, size_t(double(v.size()) * 0.95))];
    }
    double max() const { return ms.empty() ? 0 : *std::max_element(ms.begin(), ms.end()); }
};

// One frame: the viewport's own paint event (the tree and its legend) into an image of its size.
double renderFrame(ui::TreeView *view, QImage &image)
{
    QElapsedTimer t;
    t.start();
    view->viewport()->render(&image);
    return double(t.nsecsElapsed()) / 1e6;
}

// A profile of 100,000 ATen calls as `kforge-cli profile` writes one: top-level operators of 2-40 us,
// each with one or two nested calls, on two threads.
std::shared_ptr<const ui::WorkloadProfile> manyCalls(int count)
{
    WorkloadFile w;
    w.name = "bench";
    w.model.kind = "torchscript";
    w.model.path = "bench.pt";
    std::mt19937_64 rng(11);
    const char *ops[] = {"aten::linear", "aten::gelu", "aten::add", "aten::layer_norm", "aten::softmax", "aten::matmul"};
    double t[2] = {0, 0};
    for (int i = 0; i < count;) {
        const int tid = int(rng() % 2);
        CapturedCall c;
        c.op = ops[rng() % 6];
        CallArg x;
        x.name = "self";
        x.kind = "tensor";
        TensorMeta meta;
        meta.shape = {64, 1024};
        meta.dtype = "float32";
        x.tensors.push_back(meta);
        c.args = {x};
        c.tid = tid;
        c.startUs = t[tid];
        c.durUs = 2 + double(rng() % 380) / 10;
        w.calls.push_back(c);
        ++i;
        for (int k = 0; k < 1 + int(rng() % 2) && i < count; ++k, ++i) {
            CapturedCall inner = c;
            inner.op = "aten::empty";
            inner.depth = 1;
            inner.startUs = c.startUs + 0.2 + k * c.durUs / 2;
            inner.durUs = c.durUs / 3;
            w.calls.push_back(inner);
        }
        t[tid] += c.durUs + 0.5;
    }
    return std::make_shared<const ui::WorkloadProfile>("bench.json", std::move(w));
}

double renderTimeline(ui::TimelineView *view, QImage &image)
{
    QElapsedTimer t;
    t.start();
    view->viewport()->render(&image);
    return double(t.nsecsElapsed()) / 1e6;
}

} // namespace

int main(int argc, char **argv)
{
    int nodes = 10000, frames = 40;
    std::string keep;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--nodes" && i + 1 < argc)
            nodes = std::max(2, std::atoi(argv[++i]));
        else if (a == "--frames" && i + 1 < argc)
            frames = std::max(1, std::atoi(argv[++i]));
        else if (a == "--keep" && i + 1 < argc)
            keep = argv[++i];
        else {
            std::fprintf(stderr, "usage: kforge-gui-bench [--nodes N] [--frames N] [--keep FILE]\n");
            return 2;
        }
    }

    QTemporaryDir dir;
    const std::string path = keep.empty() ? (dir.path() + QStringLiteral("/bench.kforge")).toStdString() : keep;
    std::remove(path.c_str());
    QElapsedTimer clock;
    clock.start();
    // Written in a child: the parent's VmHWM is then the window's, not the writer's.
    const pid_t child = fork();
    if (child == 0) {
        try {
            writeSession(path, nodes);
        } catch (const std::exception &e) {
            std::fprintf(stderr, "gui-bench: %s\n", e.what());
            _exit(1);
        }
        _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return 1;
    const double writeS = double(clock.elapsed()) / 1000;

    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("kforge-gui-bench"));
    const long baseKb = statusKb("VmHWM:");
    ui::MainWindow w;
    w.resize(1600, 1000);
    w.show();
    QApplication::processEvents();

    // First paint: from openSession() to the end of the first paint of the tree's viewport that shows
    // the session; built: every node has its item. The event loop runs throughout (openSession() waits
    // in a local loop), and the stall meter's timer measures how long it was kept from running.
    auto *view = w.treeView();
    struct PaintWatch : QObject {
        ui::MainWindow *window = nullptr;
        QElapsedTimer *clock = nullptr;
        double firstPaintMs = -1;
        bool eventFilter(QObject *, QEvent *e) override
        {
            if (e->type() == QEvent::Paint && firstPaintMs < 0 && window->context()->snapshot())
                QTimer::singleShot(0, this, [this] { // runs once this paint has returned
                    if (firstPaintMs < 0)
                        firstPaintMs = double(clock->nsecsElapsed()) / 1e6;
                });
            return false;
        }
    } watch;
    QElapsedTimer t;
    watch.window = &w;
    watch.clock = &t;
    view->viewport()->installEventFilter(&watch);
    test::StallMeter stall;
    stall.start();
    t.start();
    const QString error = w.openSession(QString::fromStdString(path));
    if (!error.isEmpty()) {
        std::fprintf(stderr, "gui-bench: %s\n", error.toLocal8Bit().constData());
        return 1;
    }
    const double openMs = double(t.nsecsElapsed()) / 1e6;
    if (view->isBuilding()) {
        QEventLoop loop;
        QObject::connect(view, &ui::TreeView::built, &loop, &QEventLoop::quit);
        loop.exec();
    }
    const double builtMs = double(t.nsecsElapsed()) / 1e6;
    view->viewport()->update();
    while (watch.firstPaintMs < 0)
        QApplication::processEvents(QEventLoop::WaitForMoreEvents, 5);
    stall.stop();
    view->viewport()->removeEventFilter(&watch);
    const double firstPaintMs = watch.firstPaintMs;
    const qint64 longestStallMs = stall.longestMs();
    QApplication::processEvents();

    QImage image(view->viewport()->size(), QImage::Format_ARGB32_Premultiplied);
    Frames fitted, zoom, pan;
    view->fitTree();
    const QTransform fit = view->transform();
    for (int i = 0; i < frames; ++i)
        fitted.ms.push_back(renderFrame(view, image));
    const bool overview = view->drawsOverview();
    if (const char *shot = std::getenv("KFORGE_BENCH_SHOT")) // to look at what was measured
        image.save(QString::fromLocal8Bit(shot));
    // Zoom from fitted to 1:1 about the best node, as the wheel would.
    const QPointF best = view->nodeItem(w.context()->snapshot()->bestNodeId())->scenePos();
    for (int i = 0; i < frames; ++i) {
        const qreal s = fit.m11() * std::pow(1.0 / fit.m11(), double(i) / std::max(1, frames - 1));
        view->setTransform(QTransform::fromScale(s, s));
        view->centerOn(best);
        zoom.ms.push_back(renderFrame(view, image));
    }
    // Pan across the whole width at 1:1.
    const QRectF scene = view->sceneRect();
    for (int i = 0; i < frames; ++i) {
        view->centerOn(scene.left() + scene.width() * double(i) / std::max(1, frames - 1), best.y());
        pan.ms.push_back(renderFrame(view, image));
    }
    const long peakKb = statusKb("VmHWM:");

    // The profiler timeline with 100,000 calls: fitted, zooming about the middle to 2 ns a pixel, and
    // panning across at 100 ns a pixel.
    auto *panels = w.workloadPanels();
    auto *timeline = panels->timeline();
    panels->timelineDock()->show();
    panels->timelineDock()->resize(1600, 400);
    timeline->resize(1600, 360);
    QElapsedTimer readT;
    readT.start();
    panels->context()->setProfiles(manyCalls(100000));
    const double timelineSetMs = double(readT.nsecsElapsed()) / 1e6;
    QApplication::processEvents();
    QImage tlImage(timeline->viewport()->size(), QImage::Format_ARGB32_Premultiplied);
    Frames tlFit, tlZoom, tlPan;
    timeline->fit();
    for (int i = 0; i < frames; ++i)
        tlFit.ms.push_back(renderTimeline(timeline, tlImage));
    const int fitBoxes = timeline->lastFrame().boxes, fitMerged = timeline->lastFrame().mergedCalls;
    const double fittedUsPerPx = timeline->mapping().usPerPixel;
    const double mid = timeline->viewport()->width() / 2.0;
    const double zoomStep = std::pow(fittedUsPerPx / 0.002, 1.0 / std::max(1, frames - 1));
    for (int i = 0; i < frames; ++i) {
        timeline->zoomAt(mid, i ? zoomStep : 1.0);
        tlZoom.ms.push_back(renderTimeline(timeline, tlImage));
    }
    timeline->fit();
    timeline->zoomAt(0, fittedUsPerPx / 0.1);
    const double panStep = (timeline->axisEndUs() / 0.1) / std::max(1, frames - 1);
    for (int i = 0; i < frames; ++i) {
        timeline->panBy(i ? panStep : 0);
        tlPan.ms.push_back(renderTimeline(timeline, tlImage));
    }
    const long timelinePeakKb = statusKb("VmHWM:");

    std::printf("nodes            %d (session written in %.1f s)\n", int(w.context()->snapshot()->nodes().size()), writeS);
    std::printf("window           %dx%d, tree viewport %dx%d, fitted scale %.3f\n", w.width(), w.height(), view->viewport()->width(),
                view->viewport()->height(), fit.m11());
    std::printf("open             %.0f ms (read on a pool thread, snapshot shown)\n", openMs);
    std::printf("first paint      %.0f ms (target < 1000)\n", firstPaintMs);
    std::printf("tree built       %.0f ms (every node's item made)\n", builtMs);
    std::printf("longest stall    %lld ms from open to built and painted (target < 50)\n", (long long)longestStallMs);
    std::printf("frames (ms)      median   p95    max   (target < 33)\n");
    std::printf("  fitted         %6.1f %6.1f %6.1f  (%s)\n", fitted.median(), fitted.p95(), fitted.max(),
                overview ? "drawn as an overview" : "drawn item by item");
    std::printf("  zoom sweep     %6.1f %6.1f %6.1f\n", zoom.median(), zoom.p95(), zoom.max());
    std::printf("  pan at 1:1     %6.1f %6.1f %6.1f\n", pan.median(), pan.p95(), pan.max());
    std::printf("peak memory      %.0f MiB VmHWM (%.0f MiB before the window)\n", double(peakKb) / 1024, double(baseKb) / 1024);
    std::printf("timeline         100,000 calls, viewport %dx%d, profile set up in %.0f ms\n", timeline->viewport()->width(),
                timeline->viewport()->height(), timelineSetMs);
    std::printf("  fitted         %6.1f %6.1f %6.1f  (%d boxes, %d calls merged)\n", tlFit.median(), tlFit.p95(), tlFit.max(), fitBoxes,
                fitMerged);
    std::printf("  zoom to 2 ns/px%6.1f %6.1f %6.1f\n", tlZoom.median(), tlZoom.p95(), tlZoom.max());
    std::printf("  pan at 100 ns/px%5.1f %6.1f %6.1f\n", tlPan.median(), tlPan.p95(), tlPan.max());
    std::printf("  peak memory    %.0f MiB VmHWM with the timeline\n", double(timelinePeakKb) / 1024);
    const bool ok = firstPaintMs < 1000 && longestStallMs < 50 && std::max({fitted.max(), zoom.max(), pan.max(), tlFit.max(), tlZoom.max(), tlPan.max()}) < 33;
    std::printf("targets          %s\n", ok ? "met" : "MISSED");
    return 0;
}
