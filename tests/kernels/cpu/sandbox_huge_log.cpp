// Makes the compiler write megabytes of diagnostics: a template instantiated thousands of times, each
// instance an error with its notes.
template<int N> struct Loud {
    static_assert(N > 1000000, "kforge log flood kforge log flood kforge log flood kforge log flood kforge log flood");
    static constexpr int value = Loud<N - 1>::value + 1;
};
template<> struct Loud<-300> { static constexpr int value = 0; };
int flood = Loud<0>::value;
extern "C" int kforge_entry(const kf_tensor *, int, kf_tensor *, int)
{
    return flood;
}
