// Opening of the CPU softmax kernels' entry: one contiguous-row fp32 matrix in, one out.
extern "C" int kforge_entry(const kf_tensor *inputs, int n_inputs, kf_tensor *outputs, int n_outputs)
{
    if (n_inputs != 1 || n_outputs != 1 || inputs[0].dtype != KF_F32 || inputs[0].ndim != 2)
        return 1;
    if (inputs[0].strides[1] != 1 || outputs[0].strides[1] != 1)
        return 2;
    const int64_t rows = inputs[0].sizes[0], cols = inputs[0].sizes[1];
    const float *x = (const float *)inputs[0].data;
    float *y = (float *)outputs[0].data;
