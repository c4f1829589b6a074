// cuda.<loss family>.grid_reduce: the sum of KF_EXPR(v) over every element, v the KF_NIN inputs' values
// as float (the card's expression, defined before this file). Input k is read at the element's index, or
// at its column where KF_MODE(k) is 1 (a target row broadcast over the rows). A capped grid of BPS
// blocks per SM strides over VEC-element packs, UNROLL packs in flight per thread; each pack's terms are
// added in float, then into ACC_T; each block writes one partial, and kf_loss_final adds them. A
// broadcast row's column is carried from pack to pack (a 64-bit remainder per pack would cost more than
// the load it addresses).
__device__ __forceinline__ long long kf_at(int k, long long i, long long cols) { return KF_MODE(k) ? i % cols : i; }

// BPS blocks of every SM's share of the grid must be resident at once (a block left for a second wave
// would double the time of its share), so the registers are held to what BPS blocks allow.
extern "C" __global__ void __launch_bounds__(BLOCK, BPS)
kf_loss_partial(const T *__restrict__ x0, const T *__restrict__ x1, const T *__restrict__ x2, const T *__restrict__ x3,
                ACC_T *__restrict__ partial, long long n, long long cols)
{
    const T *in[4] = {x0, x1, x2, x3};
    bool vec_ok = VEC > 1;
#pragma unroll
    for (int k = 0; k < KF_NIN; ++k)
        vec_ok = vec_ok && aligned_to(in[k], VEC * sizeof(T)) && (!KF_MODE(k) || cols % VEC == 0);
    const long long stride = (long long)gridDim.x * BLOCK;
    const long long packs = vec_ok ? n / VEC : 0;
    ACC_T acc = 0;
    long long p = (long long)blockIdx.x * BLOCK + threadIdx.x;
    const long long step = KF_MODE_MASK && cols > 0 ? stride * VEC % cols : 0; // how far the column moves per stride
    long long col = KF_MODE_MASK && p < packs ? p * VEC % cols : 0;             // the column of pack p
    for (; p + (UNROLL - 1) * stride < packs; p += UNROLL * stride) {
        Pack<VEC> pk[UNROLL][KF_NIN];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
#pragma unroll
            for (int k = 0; k < KF_NIN; ++k)
                pk[u][k] = *reinterpret_cast<const Pack<VEC> *>(in[k] + (KF_MODE(k) ? col : (p + u * stride) * VEC));
            if (KF_MODE_MASK) {
                col += step;
                if (col >= cols) col -= cols;
            }
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            float s = 0.f;
#pragma unroll
            for (int j = 0; j < VEC; ++j) {
                float v[KF_NIN];
#pragma unroll
                for (int k = 0; k < KF_NIN; ++k)
                    v[k] = to_f(pk[u][k].v[j]);
                s += KF_EXPR(v);
            }
            acc += s;
        }
    }
    for (; p < packs; p += stride) {
        float s = 0.f;
#pragma unroll
        for (int j = 0; j < VEC; ++j) {
            float v[KF_NIN];
#pragma unroll
            for (int k = 0; k < KF_NIN; ++k)
                v[k] = to_f(in[k][kf_at(k, p * VEC + j, cols)]);
            s += KF_EXPR(v);
        }
        acc += s;
    }
    // The elements no pack covers (all of them where packs are off).
    for (long long i = packs * VEC + (long long)blockIdx.x * BLOCK + threadIdx.x; i < n; i += stride) {
        float v[KF_NIN];
#pragma unroll
        for (int k = 0; k < KF_NIN; ++k)
            v[k] = to_f(in[k][kf_at(k, i, cols)]);
        acc += KF_EXPR(v);
    }
    acc = block_sum_acc<BLOCK>(acc);
    if (threadIdx.x == 0) partial[blockIdx.x] = acc;
}
