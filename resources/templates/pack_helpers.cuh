// VEC-element packs as raw bits (Raw, Packed) and load_pack, for staging rows in shared memory unconverted.
// Needs VEC.

// VEC elements as raw bits, for moving between global and shared memory without converting.
template<int BYTES> struct RawOf { typedef unsigned short t; };
template<> struct RawOf<4> { typedef unsigned t; };
template<> struct RawOf<8> { typedef uint2 t; };
template<> struct RawOf<16> { typedef uint4 t; };
typedef typename RawOf<VEC * sizeof(T)>::t Raw;
union Packed { Raw r; T v[VEC]; };

// One pack at segment offset i: a vector load when allowed, else element by element with `pad` past
// the end of the chunk.
__device__ __forceinline__ Packed load_pack(const T *p, long long i, long long hi, bool vec_ok, float pad)
{
    Packed pk;
    if (vec_ok && i + VEC <= hi) {
        pk.r = *reinterpret_cast<const Raw *>(p + i);
    } else {
#pragma unroll
        for (int j = 0; j < VEC; ++j) pk.v[j] = i + j < hi ? p[i + j] : from_f(pad);
    }
    return pk;
}

// The same for a segment whose valid elements are [first, hi): a pack that straddles either end is
// read element by element, `pad` outside, so a row at any offset is read in aligned packs.
__device__ __forceinline__ Packed load_pack_in(const T *p, long long i, long long first, long long hi, bool vec_ok, float pad)
{
    Packed pk;
    if (vec_ok && i >= first && i + VEC <= hi) {
        pk.r = *reinterpret_cast<const Raw *>(p + i);
    } else {
#pragma unroll
        for (int j = 0; j < VEC; ++j) pk.v[j] = i + j >= first && i + j < hi ? p[i + j] : from_f(pad);
    }
    return pk;
}
