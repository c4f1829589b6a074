// Wrong: does not compile (undeclared identifier).
extern "C" int kforge_entry(const kf_tensor *in, int, kf_tensor *out, int)
{
    return undeclared_rows + in[0].ndim;
}
