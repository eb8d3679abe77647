"""Next-token cross-entropy straight from the last hidden states, one chunk of rows at a time.

The training loss of the decoder (ftip-0012) is ``mean_t [logsumexp(z_t) - z_t[y_t]]`` with
``z_t = W_U h_t + b_U``. Written as ``F.cross_entropy(model(x), y)`` it materializes the full
``[N, |V|]`` logits, their log-softmax and, in the backward pass, a gradient of the same size.
:func:`linear_cross_entropy` computes the same loss and the same gradients by visiting the rows
in chunks: each chunk's logits are formed, turned into log-probabilities (its loss), then in
place into ``(softmax - onehot) / n`` and multiplied straight into the gradients of ``h``, ``W_U`` and
``b_U``, then freed. Nothing of size ``N x |V|`` is ever held, which saves memory traffic, the
allocation of fresh pages for the large buffers, and five full passes over the logits.
"""
from __future__ import annotations

import torch

#: Elements per chunk of logits, 2 MiB of float32, which is large enough for efficient matrix
#: products and small enough to stay in cache and in the allocator's reusable memory.
CHUNK_ELEMENTS = 2**19


def _check(h: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, targets: torch.Tensor,
           ignore_index: int) -> None:
    if h.dim() != 2 or weight.dim() != 2 or h.shape[1] != weight.shape[1]:
        raise ValueError(f"need hidden states [N, d] and weight [V, d]; got {tuple(h.shape)} and {tuple(weight.shape)}")
    if bias is not None and bias.shape != weight.shape[:1]:
        raise ValueError(f"bias shape {tuple(bias.shape)} must be [V] = [{weight.shape[0]}]")
    if targets.shape != h.shape[:1] or targets.dtype != torch.long:
        raise ValueError(f"targets must be a LongTensor [N] = [{h.shape[0]}], got {targets.dtype} {tuple(targets.shape)}")
    valid = targets != ignore_index
    vocab = weight.shape[0]
    bad = valid & ((targets < 0) | (targets >= vocab))
    if bool(bad.any()):
        i = int(bad.nonzero()[0])
        raise ValueError(f"target {int(targets[i])} at row {i} is outside [0, {vocab}) and is not ignore_index={ignore_index}")
    if not bool(valid.any()):
        raise ValueError(f"every target equals ignore_index={ignore_index}: the mean loss over no tokens is undefined")


class _LinearCrossEntropy(torch.autograd.Function):
    """Loss and, when needed, its gradients in one chunked pass; the backward only rescales them."""

    @staticmethod
    def forward(ctx, h, weight, bias, targets, ignore_index, chunk_rows):
        need_h, need_w, need_b = ctx.needs_input_grad[:3]
        acc = torch.promote_types(h.dtype, torch.float32)  # float32, or float64 for float64 inputs
        valid = targets != ignore_index
        safe = torch.where(valid, targets, 0).unsqueeze(1)  # ignored rows read column 0, with weight 0
        scale = valid.to(acc) / valid.sum()  # d loss / d row loss: 1/n for kept rows, 0 for ignored ones
        weight_t = weight.t()
        total = h.new_zeros((), dtype=acc)
        grad_h = torch.empty_like(h) if need_h else None
        grad_w = torch.zeros_like(weight, dtype=acc) if need_w else None
        grad_b = torch.zeros_like(bias, dtype=acc) if need_b else None
        for start in range(0, h.shape[0], chunk_rows):
            rows = slice(start, start + chunk_rows)
            hc = h[rows]
            z = (hc @ weight_t if bias is None else torch.addmm(bias, hc, weight_t)).to(acc)
            log_p = torch.log_softmax(z, dim=1)
            total -= (log_p.gather(1, safe[rows]).squeeze(1) * scale[rows]).sum()
            if not (need_h or need_w or need_b):
                continue
            p = log_p.exp_()  # the softmax rows, written over the log-probabilities
            p.scatter_add_(1, safe[rows], torch.full_like(scale[rows], -1.0).unsqueeze(1))  # softmax - onehot
            p.mul_(scale[rows].unsqueeze(1))
            if need_b:
                grad_b += p.sum(dim=0)
            if need_w:
                grad_w.addmm_(p.t(), hc.to(acc))
            if need_h:
                torch.mm(p.to(weight.dtype), weight, out=grad_h[rows])
        ctx.save_for_backward(grad_h, grad_w, grad_b)
        ctx.dtypes = (h.dtype, weight.dtype, None if bias is None else bias.dtype)
        return total

    @staticmethod
    def backward(ctx, grad_out):
        scaled = [None if g is None else (g * grad_out).to(dtype) for g, dtype in zip(ctx.saved_tensors, ctx.dtypes)]
        return (*scaled, None, None, None)


def linear_cross_entropy(
    h: torch.Tensor,
    weight: torch.Tensor,
    targets: torch.Tensor,
    bias: torch.Tensor | None = None,
    *,
    ignore_index: int = -100,
    chunk_rows: int | None = None,
) -> torch.Tensor:
    """``F.cross_entropy(F.linear(h, weight, bias), targets, ignore_index=...)`` without the full logits (ftip-0012).

    ``h`` is ``[N, d]``, ``weight`` is ``W_U`` ``[V, d]``, ``bias`` is ``b_U`` ``[V]`` or ``None``,
    ``targets`` is ``[N]`` with ids in ``[0, V)`` or ``ignore_index`` (rows left out of the mean).
    Returns the mean loss over the kept rows; its gradients with respect to ``h``, ``weight`` and
    ``bias`` are those of the unchunked expression. Logits, softmax and the loss are float32 for
    float32 and half-precision inputs (as ``transformers`` upcasts logits for its loss) and
    float64 for float64 inputs. Rows are
    processed ``chunk_rows`` at a time (default: about ``2**19`` logits per chunk). Targets out of
    range, or every target ignored (a mean over no tokens), raise ``ValueError``.
    """
    _check(h, weight, bias, targets, ignore_index)
    if chunk_rows is None:
        chunk_rows = max(1, CHUNK_ELEMENTS // weight.shape[0])
    elif not isinstance(chunk_rows, int) or isinstance(chunk_rows, bool) or chunk_rows < 1:
        raise ValueError(f"chunk_rows={chunk_rows!r} must be an int >= 1 or None")
    return _LinearCrossEntropy.apply(h, weight, bias, targets, ignore_index, chunk_rows)
