#pragma once
// Records every ATen call made on this thread while it is alive, through RecordFunction callbacks on
// the dispatcher (libtorch 1.13 and 2.x): operator, overload, schema, every argument (tensors as shape,
// dtype and strides; integer tensors also with their value range), nesting depth and time. Time is CPU
// time from a steady clock taken when the start callback is done and again when the end callback begins,
// so the recorder's own work stays out of the call it measures.
//
// On CUDA, the times here are host times of the launches, not of the kernels: device events belong in
// the marked place in call_recorder.cpp (an event pair per call, recorded on the current stream and
// read after a synchronize). Until then a CUDA profile says so instead of pretending.
//
// The first call of each signature keeps copies of its input tensors, up to a byte budget: the sample
// of real inputs that cards are verified on beside random ones.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "workload/workload_file.h"

namespace at {
class Tensor;
}

namespace kforge::worker {

class CallRecorder {
public:
    explicit CallRecorder(int64_t sampleBudgetBytes = int64_t(256) << 20);
    ~CallRecorder();
    CallRecorder(const CallRecorder &) = delete;
    CallRecorder &operator=(const CallRecorder &) = delete;

    void stop(); // removes the callbacks; the destructor does too
    const std::vector<CapturedCall> &calls() const;
    // The input tensors of the first call with this signature, in argument order, when kept.
    const std::vector<at::Tensor> *sample(const std::string &signature) const;

    struct State;

private:
    std::unique_ptr<State> m_state;
};

} // namespace kforge::worker
