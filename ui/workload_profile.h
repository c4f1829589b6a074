#pragma once
// A workload file as the profiler panels show it, read once into an immutable value (like a session
// snapshot): the calls on the timeline, grouped into call patterns, each card tied to its pattern,
// and, for two profiles of one workload (without and with a pack), the operators whose time changed.
// No Qt and no widget: the table's rows and the comparison are tested as plain functions.
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ui/session_snapshot.h"
#include "ui/timeline_geometry.h"
#include "workload/workload_file.h"

namespace kforge::ui {

class WorkloadProfile {
public:
    WorkloadProfile() = default;
    WorkloadProfile(std::string path, WorkloadFile file);
    // loadWorkloadFile() and what the panels derive from it. Throws kforge::Error with the reason;
    // a workload that was never profiled (no calls) is refused too, saying how to profile it.
    static std::shared_ptr<const WorkloadProfile> read(const std::string &path);

    const std::string &path() const { return m_path; }
    const WorkloadFile &file() const { return m_file; }
    const std::vector<CallGroup> &groups() const { return m_groups; } // ranked, top-level calls only
    // The calls with times from the first call's start (profiles of two runs share one axis).
    const std::vector<TimelineCall> &timeline() const { return m_timeline; }
    const TimelineLanes &lanes(LaneBy by) const { return by == LaneBy::Depth ? m_byDepth : m_byThread; }
    long groupOfCall(size_t call) const { return m_groupOfCall.at(call); } // -1: a nested call
    long groupOfCard(size_t card) const { return m_cardGroup.at(card); }   // -1: no pattern matches
    long cardOfGroup(size_t group) const;                                  // -1: the pattern has no card
    long groupOfSignature(const std::string &signature) const;
    double topLevelUs() const { return m_topLevelUs; }

private:
    std::string m_path;
    WorkloadFile m_file;
    std::vector<CallGroup> m_groups;
    std::vector<TimelineCall> m_timeline;
    TimelineLanes m_byDepth, m_byThread;
    std::vector<long> m_groupOfCall, m_cardGroup;
    std::unordered_map<std::string, long> m_bySignature;
    double m_topLevelUs = 0;
};

using ProfilePtr = std::shared_ptr<const WorkloadProfile>;

// Cards are made from the ranked call patterns in order, skipping patterns without a card; a card
// belongs to the first unclaimed pattern of its operator with its number of calls.
std::vector<long> matchCardsToGroups(const WorkloadFile &w, const std::vector<CallGroup> &groups);

// "4x128x256:float32 256:float32": every tensor argument of the call.
std::string callShapes(const CapturedCall &call);

// One call pattern in two profiles of one workload. A pattern is the same operator at the same
// shapes, dtypes and arguments; a pack changes how long it takes, not what is called.
struct OperatorChange {
    std::string signature, op;
    double beforeUs = 0, afterUs = 0;
    size_t beforeCalls = 0, afterCalls = 0;
    bool changed = false; // time moved by more than the thresholds, or the pattern is in one profile only
    double ratio() const { return beforeUs > 0 ? afterUs / beforeUs : 0; }
};

struct ProfileComparison {
    std::vector<OperatorChange> operators; // by time saved, largest first
    double beforeUs = 0, afterUs = 0;      // top-level totals
    const OperatorChange *find(const std::string &signature) const;

private:
    friend ProfileComparison compareProfiles(const WorkloadProfile &, const WorkloadProfile &, double, double);
    std::unordered_map<std::string, size_t> m_index;
};

// A pattern changed when its total time moved by more than `threshold` of itself (0.05: 5%) and by
// more than `minShare` of the whole profile's time, so the noise of a 10-us call is not a change.
ProfileComparison compareProfiles(const WorkloadProfile &before, const WorkloadProfile &after, double threshold = 0.05,
                                  double minShare = 0.001);

// A row of the operator table: one card of the workload.
struct OperatorRow {
    std::string key, op, shapes;
    long group = -1;       // the card's call pattern, -1 when none matches
    int64_t calls = 0;
    double totalUs = 0, share = 0;
    // The time a call takes over the least time its bytes allow at the device's copy rate (1: at the
    // floor); 0 when unknown. The rate is the one the open session's roofline floors were made with.
    double headroom = 0;
    std::string search;    // "not searched", "accepted 2.40x (#12)", "searched: 30 nodes, none faster", ...
    int64_t bestNode = 0;  // the session's best node for this card, 0: none
    // The same call pattern in the profile run with a pack: its total, -1 without one (or when the
    // pattern is not in it), and whether its time moved (compareProfiles()' thresholds).
    double afterUs = -1;
    bool changed = false;
};

// The session operator a card was searched as: the same key, else the same ATen operator at the
// same shape, else (a family card) the same family at the same shape and dtypes. nullptr when the
// session has none (or there is no session).
const OperatorRecord *sessionOperatorFor(const OperatorCard &card, const SessionSnapshot *session);
// The session's copy rate in bytes per second, from a node's roofline floor and its operator's bytes
// model (the operator's own nodes preferred); 0 when no node has a floor.
double sessionBandwidth(const SessionSnapshot &session, const OperatorRecord *preferred = nullptr);

// Ranked by total time, largest first.
std::vector<OperatorRow> operatorRows(const WorkloadProfile &profile, const SessionSnapshot *session,
                                      const ProfileComparison *withPack = nullptr);

} // namespace kforge::ui
