#pragma once
// The oneDNN descriptors and cache keys that Conv2D's forward primitive and its
// two backward ones share (conv_ops.cpp, conv_grad_ops.cpp). A grouped
// convolution (DepthwiseConv2dNative: one group per input channel) has
// filters [KH, KW, C/groups, O], output channel o in group o / (O/groups); as
// grouped weights oneDNN reads them through strides, so Kiln's filter layout
// is oneDNN's user layout in both cases.
#include "ops/nn_internal.h"
#include "ops/onednn.h"

namespace kiln::ops {

struct ConvDescs {
  dnnl::memory::desc src, dst, user_weights, any_weights;
  dnnl::memory::dims strides, dilates, pad_l, pad_r;
};

// Of float32 values, or `type`'s (bf16: oneDNN's bf16 kernels).
inline ConvDescs conv_descs(const ConvDims& d, dnnl::memory::data_type type = dnnl::memory::data_type::f32) {
  using tag = dnnl::memory::format_tag;
  const Window2D& g = d.g;
  dnnl::memory::dims weights{d.o, d.c, g.kh, g.kw};
  dnnl::memory::desc user_weights(weights, type, tag::hwio);
  if (d.groups > 1) {
    const int64_t og = d.o / d.groups, cg = d.c / d.groups;
    weights = {d.groups, og, cg, g.kh, g.kw};
    // Element (kh, kw, ci, group * og + o) of the HWIO filters.
    user_weights = dnnl::memory::desc(weights, type, dnnl::memory::dims{og, 1, d.o, g.kw * cg * d.o, cg * d.o});
  }
  return ConvDescs{dnnl::memory::desc({d.n, d.c, d.h, d.w}, type, tag::nhwc),
                   dnnl::memory::desc({d.n, d.o, g.h.out, g.w.out}, type, tag::nhwc),
                   user_weights,
                   dnnl::memory::desc(weights, type, tag::any),
                   {g.sh, g.sw},
                   {g.dh - 1, g.dw - 1},
                   {g.h.pad_before, g.w.pad_before},
                   {g.h.pad_after, g.w.pad_after}};
}

// `kind` tells the primitives apart (forward, backward data, backward weights);
// a bf16 one's kind is kBf16Kind more than its float32 twin's.
constexpr uint32_t kBf16Kind = 100;

inline onednn::PrimitiveKey conv_key(uint32_t kind, const ConvDims& d,
                                     dnnl::memory::data_type type = dnnl::memory::data_type::f32) {
  const Window2D& g = d.g;
  onednn::PrimitiveKey key(type == dnnl::memory::data_type::bf16 ? kind + kBf16Kind : kind);
  for (int64_t v : {d.n, d.h, d.w, d.c, d.o, g.kh, g.kw, g.sh, g.sw, g.dh, g.dw, g.h.pad_before, g.h.pad_after,
                    g.w.pad_before, g.w.pad_after, d.groups})
    key.add(v);
  return key;
}

}  // namespace kiln::ops
