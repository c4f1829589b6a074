// Faults: writes through a null pointer. It takes the worker down; the pool must restart it.
extern "C" int kforge_entry(const kf_tensor *, int, kf_tensor *, int)
{
    volatile float *p = nullptr;
    *p = 1.0f;
    return 0;
}
