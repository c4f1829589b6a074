#include "search/search_value.h"

namespace kforge {

bool ranksByCandidateTime(const std::string &backend)
{
    return backend == "cpu";
}

double SearchValue::of(double speedup, double candidateMedianUs)
{
    if (!m_byCandidateTime || speedup <= 0 || candidateMedianUs <= 0)
        return speedup;
    if (m_referenceUs <= 0)
        m_referenceUs = speedup * candidateMedianUs;
    return m_referenceUs / candidateMedianUs;
}

} // namespace kforge
