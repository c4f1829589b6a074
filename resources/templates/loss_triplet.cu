// cuda.triplet_margin_loss.rows: TPR threads per row, RPB rows per block. One pass over anchor, positive
// and negative adds (a - p + eps)^2 and (a - n + eps)^2 into ACC_T; the row's threads combine them
// (shuffles, then shared memory across the row's warps), its first thread writes KF_EXPR of the two
// distances (max(margin + d_ap - d_an, 0), the card's expression) for the row, and kf_loss_final takes
// the mean over rows.
extern "C" __global__ void __launch_bounds__(TPR * RPB)
kf_triplet_rows(const T *__restrict__ a, const T *__restrict__ pos, const T *__restrict__ neg, ACC_T *__restrict__ rowloss,
                long long rows, long long cols)
{
    __shared__ ACC_T part[2][32];
    const int group = threadIdx.x / TPR, lane = threadIdx.x % TPR;
    const long long row = (long long)blockIdx.x * RPB + group;
    ACC_T sp = 0, sn = 0;
    if (row < rows) {
        const T *ar = a + row * cols, *pr = pos + row * cols, *nr = neg + row * cols;
        const bool vec_ok = VEC > 1 && cols % VEC == 0 && aligned_to(a, VEC * sizeof(T)) && aligned_to(pos, VEC * sizeof(T))
                            && aligned_to(neg, VEC * sizeof(T));
        const long long body = vec_ok ? cols : 0;
        for (long long c = (long long)lane * VEC; c < body; c += (long long)TPR * VEC) {
            const Pack<VEC> pa = *reinterpret_cast<const Pack<VEC> *>(ar + c);
            const Pack<VEC> pp = *reinterpret_cast<const Pack<VEC> *>(pr + c);
            const Pack<VEC> pn = *reinterpret_cast<const Pack<VEC> *>(nr + c);
            float fp = 0.f, fn = 0.f;
#pragma unroll
            for (int j = 0; j < VEC; ++j) {
                const float x = to_f(pa.v[j]);
                const float dp = x - to_f(pp.v[j]) + (float)KF_EPS, dn = x - to_f(pn.v[j]) + (float)KF_EPS;
                fp += dp * dp;
                fn += dn * dn;
            }
            sp += fp;
            sn += fn;
        }
        for (long long c = body + lane; c < cols; c += TPR) {
            const float x = to_f(ar[c]);
            const float dp = x - to_f(pr[c]) + (float)KF_EPS, dn = x - to_f(nr[c]) + (float)KF_EPS;
            sp += dp * dp;
            sn += dn * dn;
        }
    }
    sp = warp_sum_acc(sp);
    sn = warp_sum_acc(sn);
    if (TPR > 32) {
        if (threadIdx.x % 32 == 0) {
            part[0][threadIdx.x / 32] = sp;
            part[1][threadIdx.x / 32] = sn;
        }
        __syncthreads();
        if (lane == 0) {
            sp = sn = 0;
            for (int w = 0; w < TPR / 32; ++w) {
                sp += part[0][group * (TPR / 32) + w];
                sn += part[1][group * (TPR / 32) + w];
            }
        }
    }
    if (lane == 0 && row < rows) {
        const float v[2] = {(float)sqrt(sp), (float)sqrt(sn)};
        rowloss[row] = (ACC_T)(KF_EXPR(v));
    }
}
