"""bandjit inside Hugging Face's Longformer: patch_longformer(model) replaces the
sliding-chunks score and context computations of every LongformerSelfAttention in a loaded
model with bandjit's band_qk and band_pv (and their backward kernels); unpatch_longformer
undoes it. Everything else — the padding mask, softmax, dropout and the global-attention
path — stays HF's own code.

HF's `_sliding_chunks_query_key_matmul(query, key, w)` takes [B, N, H, Dh] and returns the
band [B, N, H, 2w + 1] with slot j holding key i + j − w and −inf off the sequence: band_qk
with window_left = window_right = w, layout "bnhd". `_sliding_chunks_matmul_attn_probs_value
(probs, value, w)` is band_pv. Calls the kernels cannot take (HF's head_dim-1 call that
builds the padding band, CPU tensors, other dtypes) go to HF's own method.
"""
import types

from . import torch as _bt

_QK = "_sliding_chunks_query_key_matmul"
_PV = "_sliding_chunks_matmul_attn_probs_value"
_FLAG = "_bandjit_patched"
_SUPPORTED = {"torch.float32", "torch.float16", "torch.bfloat16"}


def _takes(*tensors):
    """What band_qk/band_pv accept: CUDA tensors of one supported dtype, head_dim 16 … 256
    in steps of 16 (HF's padding-mask call has head_dim 1 and stays HF's)."""
    dh = tensors[-1].shape[-1]
    return (all(t.is_cuda and str(t.dtype) in _SUPPORTED and t.dtype == tensors[0].dtype for t in tensors)
            and dh % 16 == 0 and 16 <= dh <= 256)


def _query_key(self, query, key, window_overlap):
    if not _takes(query, key):
        return getattr(type(self), _QK)(self, query, key, window_overlap)
    return _bt.band_qk(query, key, window_overlap, window_overlap, layout="bnhd")


def _probs_value(self, attn_probs, value, window_overlap):
    if not _takes(attn_probs, value):
        return getattr(type(self), _PV)(self, attn_probs, value, window_overlap)
    return _bt.band_pv(attn_probs, value, window_overlap, window_overlap, layout="bnhd")


def _attention_modules(model):
    from transformers.models.longformer.modeling_longformer import LongformerSelfAttention

    return [m for m in model.modules() if isinstance(m, LongformerSelfAttention)]


def patch_longformer(model):
    """Routes every LongformerSelfAttention of `model` through bandjit; returns how many
    modules it patched (already patched ones are left as they are)."""
    count = 0
    for m in _attention_modules(model):
        if getattr(m, _FLAG, False):
            continue
        setattr(m, _QK, types.MethodType(_query_key, m))
        setattr(m, _PV, types.MethodType(_probs_value, m))
        setattr(m, _FLAG, True)
        count += 1
    return count


def unpatch_longformer(model):
    """Undoes patch_longformer: the modules use HF's methods again. Returns how many it restored."""
    count = 0
    for m in _attention_modules(model):
        if getattr(m, _FLAG, False):
            for name in (_QK, _PV, _FLAG):
                delattr(m, name)
            count += 1
    return count
