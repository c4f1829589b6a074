#pragma once
// Records every ATen call made on this thread while it is alive, through RecordFunction callbacks on
// the dispatcher (libtorch 1.13 and 2.x): operator, overload, schema, every argument (tensors as shape,
// dtype and strides; integer tensors also with their value range,
// a 0-dim floating tensor on the CPU with its value), nesting depth and time. Time is CPU
// time from a steady clock taken when the start callback is done and again when the end callback begins,
// so the recorder's own work stays out of the call it measures.
//
// With device events (a model on a CUDA device, in a worker built with the CUDA backend) every call also
// records an event on the current stream when it starts and when it ends; nothing waits during the run.
// stop() synchronizes once and replaces each call's start and duration with device time, so the
// ranking is GPU time, not the time the host took to launch. deviceTimed() says whether that happened.
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
    explicit CallRecorder(int64_t sampleBudgetBytes = int64_t(256) << 20, bool deviceEvents = false);
    ~CallRecorder();
    CallRecorder(const CallRecorder &) = delete;
    CallRecorder &operator=(const CallRecorder &) = delete;

    void stop(); // removes the callbacks (and reads the device events); the destructor does too
    bool deviceTimed() const;
    static bool deviceEventsAvailable(); // built with the CUDA backend
    const std::vector<CapturedCall> &calls() const;
    // The input tensors of the first call with this signature, in argument order, when kept.
    const std::vector<at::Tensor> *sample(const std::string &signature) const;

    struct State;

private:
    std::unique_ptr<State> m_state;
};

} // namespace kforge::worker
