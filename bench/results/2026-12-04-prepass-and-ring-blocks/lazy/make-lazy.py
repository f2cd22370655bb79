"""Variants of the emitted masked float16 L = 65536 forward (DIR/k16.cu), for timing:
  l1, l2: the boolean mask's pieces loaded lazily, D pieces ahead of the piece being
          reduced (after every x copy is issued), their bits built there;
  l2u, ou: l2 and the emitted kernel with the statistics pass unrolled for masked rows too;
  lb:     the kernel as emitted with __launch_bounds__(512, 2) (more registers).
Each file gets its own kernel name and a launch wrapper launch_<variant>."""
import sys

w = sys.argv[1]
src = open(f"{w}/k16.cu").read()


def wrapper(var):
    return f'''
void launch_{var}(const __half* x, __half* y, const unsigned char* mask, cudaStream_t s) {{
  static bool once = [] {{ cudaFuncSetAttribute(bandjit_scale_mask_softmax_{var}, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536); return true; }}();
  (void)once;
  bandjit_scale_mask_softmax_{var}<<<2048, 512, 65536, s>>>(x, y, mask);
}}
'''


def lazy(d):
    s = src
    old = "  unsigned long long removed_bits = 0;  // boolean mask: bit e·V + c of key c of piece e\n"
    assert s.count(old) == 1
    s = s.replace(old, "  mutable unsigned long long removed_bits = 0;  // boolean mask: bit e·V + c of key c of piece e\n"
                       "  mutable MaskRaw m0{}, m1{};  // the next mask pieces, loaded ahead\n"
                       "  const void* mptr = nullptr;\n")
    old = """    if constexpr (kMaskBits) {
      MaskRaw mraw[NV];
#pragma unroll
      for (int e = 0; e < NV; ++e)
        mraw[e] = needed(e) ? *mask_piece(mask, e) : MaskRaw{};
#pragma unroll
      for (int e = 0; e < NV; ++e) {
        const unsigned char* removed = reinterpret_cast<const unsigned char*>(&mraw[e]);
#pragma unroll
        for (int c = 0; c < V; ++c)
          if (removed[c]) removed_bits |= 1ull << (e * V + c);
      }
    }"""
    assert s.count(old) == 1, "copy_issue"
    new = f"""    if constexpr (kMaskBits) {{
      mptr = mask;
      m0 = needed(0) ? *mask_piece(mask, 0) : MaskRaw{{}};
      if ({d} == 2) m1 = NV > 1 && needed(1) ? *mask_piece(mask, 1) : MaskRaw{{}};
    }}"""
    s = s.replace(old, new)
    old = """  __device__ __forceinline__ void add_piece(int e, float& m, float& s) const {
    copy_async_wait(NV - 1 - e);"""
    assert s.count(old) == 1, "add_piece"
    new = f"""  __device__ __forceinline__ void add_piece(int e, float& m, float& s) const {{
    if constexpr (kMaskBits) {{
      const MaskRaw cur = m0;
      if ({d} == 2) {{
        m0 = m1;
        m1 = e + 2 < NV && needed(e + 2) ? *mask_piece(mptr, e + 2) : MaskRaw{{}};
      }} else {{
        m0 = e + 1 < NV && needed(e + 1) ? *mask_piece(mptr, e + 1) : MaskRaw{{}};
      }}
      const unsigned char* removed = reinterpret_cast<const unsigned char*>(&cur);
#pragma unroll
      for (int c = 0; c < V; ++c)
        if (removed[c]) removed_bits |= 1ull << (e * V + c);
    }}
    copy_async_wait(NV - 1 - e);"""
    s = s.replace(old, new)
    return s


def unrolled(text):
    old = "    if constexpr (Cfg::kMask == kMaskNone) {\n      // Unrolled"
    assert text.count(old) == 1, "stats"
    return text.replace(old, "    if constexpr (true) {\n      // Unrolled")


for var, text in (("l1", lazy(1)), ("l2", lazy(2)), ("l2u", unrolled(lazy(2))), ("ou", unrolled(src)),
                  ("lb", src.replace("#define BANDJIT_MIN_BLOCKS 3", "#define BANDJIT_MIN_BLOCKS 2"))):
    assert var != "lb" or text != src
    text = text.replace("bandjit_scale_mask_softmax(", f"bandjit_scale_mask_softmax_{var}(")
    open(f"{w}/k16{var}.cu", "w").write(text + wrapper(var))
open(f"{w}/k16o.cu", "w").write(src + wrapper("o").replace("bandjit_scale_mask_softmax_o", "bandjit_scale_mask_softmax"))
