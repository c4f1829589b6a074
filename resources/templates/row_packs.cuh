// A row's VEC-element packs, in and out as floats (rows.cu, add_rms_rows.cu), and rows at any element
// offset read in aligned packs (the row groups, cross entropy). Needs VEC.
//
// A row's packs are counted from the aligned address at or before its first element, which sits
// `row_offset` (0 to VEC - 1) elements into the first pack. The kernels index the row from there
// (xv = xs - off), its elements at [off, off + cols), so rows of 65535 or 50257 elements load and store
// whole 16-byte packs but for the first and last. Packs can be aligned for x and y at once only where
// the two lie the same distance from a pack boundary.
__device__ __forceinline__ bool packs_align(const T *x, const T *y)
{
    return VEC > 1 && aligned_to(x, sizeof(T)) && ((unsigned long long)x - (unsigned long long)y) % (VEC * sizeof(T)) == 0;
}
__device__ __forceinline__ int row_offset(const T *xs, bool vec_ok)
{
    return vec_ok ? (int)(((unsigned long long)xs / sizeof(T)) % VEC) : 0;
}

// Loads VEC elements at i of a row of n (as one pack when allowed, with cache hint H), `pad` past its end.
template<int H = HINT_NONE>
__device__ __forceinline__ void load_vec(const T *p, long long i, long long n, bool vec_ok, float pad, float *out)
{
    if (vec_ok && i + VEC <= n) {
        load_floats<VEC, H>(p + i, out);
    } else {
#pragma unroll
        for (int j = 0; j < VEC; ++j) out[j] = i + j < n ? to_f(p[i + j]) : pad;
    }
}

// Stores VEC values at i of a row of n, as one pack when allowed.
__device__ __forceinline__ void store_vec(T *p, long long i, long long n, bool vec_ok, const float *in)
{
    if (vec_ok && i + VEC <= n) {
        store_floats<VEC>(p + i, in);
    } else {
#pragma unroll
        for (int j = 0; j < VEC; ++j) if (i + j < n) p[i + j] = from_f(in[j]);
    }
}
