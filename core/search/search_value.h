#pragma once
// What the search ranks correct candidates by (their reward, and the template proposer's "best so far").
// The guard judges each candidate by its own evaluation's ratio, its samples interleaved with the
// baseline's, and that stays the node's speedup everywhere it is shown or decided on.
//
// On a GPU the search ranks by that ratio too: it is good to about 2% there and cancels the clock's
// drift. On the CPU it ranks by the candidate's own median time, normalised by one baseline time for the
// whole tree (the first correct evaluation's). The baseline is one ATen call at one shape, yet on the
// development VM its median moved 75-86 us between evaluations of one kernel whose own median moved
// 39.7-41.2 us (sum over the middle dim of 8 x 512 x 64, 40 samples a side), so each evaluation's ratio
// carried the baseline's noise into every comparison between two candidates.
#include <string>

namespace kforge {

// The rule: by candidate time on the CPU backend, by the evaluation's ratio elsewhere.
bool ranksByCandidateTime(const std::string &backend);

class SearchValue {
public:
    explicit SearchValue(bool byCandidateTime) : m_byCandidateTime(byCandidateTime) {}

    // The value of a correct evaluation, given its speedup (baseline median over candidate median) and
    // its candidate's median time. By candidate time, the first evaluation with both sets the tree's
    // baseline time (speedup x candidate median) and is worth its own speedup. Otherwise, or when the
    // median is unknown (a node stored without samples), the speedup.
    double of(double speedup, double candidateMedianUs);

private:
    bool m_byCandidateTime;
    double m_referenceUs = 0;
};

} // namespace kforge
