"""tf.image's box operations: the non-max-suppression family (greedy selection in NumPy, as TF's CPU kernels
select: by descending score, a box kept unless its IoU with a kept one is above the threshold; a host function
inside traces, not differentiable, as in TF), crop_and_resize (bilinear or nearest samples gathered from the
image, so gradients reach the image), draw_bounding_boxes, and the JPEG helpers decode_and_crop_jpeg and
extract_jpeg_shape."""
import numpy as np

from .. import _C
from .. import dtypes as _dtypes


def _t(x, dtype=None):
    from .._ops import convert_to_tensor
    return convert_to_tensor(x, dtype=dtype)


def _static(value, kind, what):
    """A Python number from a number or an eager tensor (TF takes tensors here; Kiln needs the value when a
    function is traced, since it shapes the host call)."""
    if isinstance(value, (_C.Tensor, _C.Variable)):
        if getattr(value, "_is_symbolic", False):
            raise ValueError(f"{what} must be known when the function is traced in Kiln (a Python number or an "
                             "eager tensor), not a tensor computed inside it")
        value = value.numpy()
    return kind(np.asarray(value).item())


def _static_ints(values, what):
    if isinstance(values, (_C.Tensor, _C.Variable)):
        values = [_static(values, lambda v: v, what)] if values.shape.rank == 0 else \
            list(np.asarray(_static_array(values, what)))
    return [_static(v, int, what) for v in values]


def _static_array(value, what):
    if getattr(value, "_is_symbolic", False):
        raise ValueError(f"{what} must be known when the function is traced in Kiln, not computed inside it")
    return value.numpy()


def _host(run, inputs, out_dtypes, shapes):
    """run(*NumPy values) -> tuple of arrays: now when eager, a host call (py_function) when traced."""
    from .._ops import constant
    if not _C.is_tracing() and not any(t._is_symbolic for t in inputs):
        outs = run(*[t.numpy() for t in inputs])
        return [constant(o, dtype=d) for o, d in zip(outs, out_dtypes)]
    from ..function import py_function
    outs = py_function(lambda *ts: run(*[t.numpy() for t in ts]), list(inputs), list(out_dtypes))
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    return [o if s is None else _C.reshape(o, s) for o, s in zip(outs, shapes)]


def _iou_matrix(boxes):
    """TF's IoU of corner boxes [y1, x1, y2, x2] (corners in either order; an empty box overlaps nothing)."""
    b = np.asarray(boxes, np.float64)
    ymin, ymax = np.minimum(b[:, 0], b[:, 2]), np.maximum(b[:, 0], b[:, 2])
    xmin, xmax = np.minimum(b[:, 1], b[:, 3]), np.maximum(b[:, 1], b[:, 3])
    area = (ymax - ymin) * (xmax - xmin)
    ih = np.clip(np.minimum(ymax[:, None], ymax[None]) - np.maximum(ymin[:, None], ymin[None]), 0, None)
    iw = np.clip(np.minimum(xmax[:, None], xmax[None]) - np.maximum(xmin[:, None], xmin[None]), 0, None)
    inter = ih * iw
    union = area[:, None] + area[None] - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = np.where((area[:, None] > 0) & (area[None] > 0) & (union > 0), inter / union, 0.0)
    return iou


def _greedy(overlaps, scores, max_output_size, threshold, score_threshold, soft_nms_sigma=0.0):
    """TF's selection: (selected indices, their possibly soft-NMS-decayed scores)."""
    scores = np.asarray(scores, np.float64).copy()
    candidates = [i for i in np.argsort(-scores, kind="stable") if scores[i] > score_threshold]
    selected, selected_scores = [], []
    scale = -0.5 / soft_nms_sigma if soft_nms_sigma > 0 else 0.0
    while candidates and len(selected) < max_output_size:
        if scale:
            candidates.sort(key=lambda i: -scores[i])
        i = candidates.pop(0)
        if scores[i] <= score_threshold:
            continue
        selected.append(i)
        selected_scores.append(scores[i])
        survivors = []
        for j in candidates:
            overlap = overlaps[i, j]
            if scale:
                scores[j] *= np.exp(scale * overlap * overlap)
                if overlap > threshold:
                    scores[j] = 0.0
            elif overlap > threshold:
                continue
            survivors.append(j)
        candidates = survivors
    return np.asarray(selected, np.int32), np.asarray(selected_scores)


def _check_boxes(boxes, scores):
    boxes, scores = _t(boxes, dtype=None), _t(scores)
    if boxes.shape.rank != 2 or (boxes.shape[1] is not None and boxes.shape[1] != 4):
        raise ValueError(f"boxes must be [num_boxes, 4], got {boxes.shape}")
    if scores.shape.rank != 1:
        raise ValueError(f"scores must be 1-D, got {scores.shape}")
    return boxes, scores


def non_max_suppression(boxes, scores, max_output_size, iou_threshold=0.5, score_threshold=float("-inf"),
                        name=None):
    """Indices (int32) of the boxes greedy non-max suppression keeps, by descending score."""
    return non_max_suppression_with_scores(boxes, scores, max_output_size, iou_threshold, score_threshold)[0]


def non_max_suppression_with_scores(boxes, scores, max_output_size, iou_threshold=0.5,
                                    score_threshold=float("-inf"), soft_nms_sigma=0.0, name=None):
    """(selected indices, their scores); soft_nms_sigma > 0 decays overlapping scores by exp(-iou^2 / 2 sigma)
    instead of dropping them (Soft-NMS, as TF's)."""
    boxes, scores = _check_boxes(boxes, scores)
    limit, iou = _static(max_output_size, int, "max_output_size"), _static(iou_threshold, float, "iou_threshold")
    low, sigma = _static(score_threshold, float, "score_threshold"), _static(soft_nms_sigma, float, "soft_nms_sigma")

    def run(b, s):
        idx, kept = _greedy(_iou_matrix(b), s, limit, iou, low, sigma)
        return idx, kept.astype(s.dtype)
    return tuple(_host(run, [boxes, scores], [_dtypes.int32, scores.dtype], [[-1], [-1]]))


def non_max_suppression_overlaps(overlaps, scores, max_output_size, overlap_threshold=0.5,
                                 score_threshold=float("-inf"), name=None):
    """non_max_suppression with the pairwise overlaps given ([n, n]) instead of boxes."""
    overlaps, scores = _t(overlaps), _t(scores)
    limit, thr = _static(max_output_size, int, "max_output_size"), _static(overlap_threshold, float, "threshold")
    low = _static(score_threshold, float, "score_threshold")
    return _host(lambda o, s: (_greedy(o, s, limit, thr, low)[0],), [overlaps, scores], [_dtypes.int32], [[-1]])[0]


def non_max_suppression_padded(boxes, scores, max_output_size, iou_threshold=0.5, score_threshold=float("-inf"),
                               pad_to_max_output_size=False, name=None, sorted_input=False,
                               canonicalized_coordinates=False, tile_size=512):
    """(selected indices, how many are valid); with pad_to_max_output_size the indices are padded with 0 to
    max_output_size. Boxes may be batched [batch, n, 4] (then indices are always padded, as TF's)."""
    boxes, scores = _t(boxes), _t(scores)
    limit, iou = _static(max_output_size, int, "max_output_size"), _static(iou_threshold, float, "iou_threshold")
    low = _static(score_threshold, float, "score_threshold")
    batched = boxes.shape.rank == 3
    pad = pad_to_max_output_size or batched

    def one(b, s):
        idx, _ = _greedy(_iou_matrix(b), s, limit, iou, low)
        valid = len(idx)
        if pad:
            idx = np.concatenate([idx, np.zeros(limit - valid, np.int32)])
        return idx, np.int32(valid)

    def run(b, s):
        if not batched:
            return one(b, s)
        results = [one(bb, ss) for bb, ss in zip(b, s)]
        return np.stack([r[0] for r in results]), np.asarray([r[1] for r in results], np.int32)
    shapes = ([-1, limit], [-1]) if batched else ([limit] if pad else [-1], [])
    return tuple(_host(run, [boxes, scores], [_dtypes.int32, _dtypes.int32], shapes))


def combined_non_max_suppression(boxes, scores, max_output_size_per_class, max_total_size, iou_threshold=0.5,
                                 score_threshold=float("-inf"), pad_per_class=False, clip_boxes=True, name=None):
    """Per batch entry: NMS within each class, then the max_total_size best boxes over all classes.
    boxes [batch, n, q, 4] (q 1: shared by the classes), scores [batch, n, classes]. Returns nmsed_boxes,
    nmsed_scores, nmsed_classes (zero-padded to max_total_size) and valid_detections."""
    boxes, scores = _t(boxes), _t(scores, dtype=_dtypes.float32)
    per_class = _static(max_output_size_per_class, int, "max_output_size_per_class")
    total = _static(max_total_size, int, "max_total_size")
    iou, low = _static(iou_threshold, float, "iou_threshold"), _static(score_threshold, float, "score_threshold")
    if boxes.shape.rank != 4 or scores.shape.rank != 3:
        raise ValueError(f"boxes must be [batch, num_boxes, q, 4] and scores [batch, num_boxes, num_classes], got "
                         f"{boxes.shape} and {scores.shape}")
    num_classes = scores.shape[2]
    size = min(total, per_class * num_classes) if pad_per_class else total

    def run(b, s):
        out_boxes = np.zeros((b.shape[0], size, 4), np.float32)
        out_scores = np.zeros((b.shape[0], size), np.float32)
        out_classes = np.zeros((b.shape[0], size), np.float32)
        valid = np.zeros((b.shape[0],), np.int32)
        for k in range(b.shape[0]):
            found = []
            for c in range(num_classes):
                cb = b[k, :, 0 if b.shape[2] == 1 else c]
                idx, kept = _greedy(_iou_matrix(cb), s[k, :, c], per_class, iou, low)
                found += [(float(sc), c, cb[i]) for i, sc in zip(idx, kept)]
            found.sort(key=lambda f: -f[0])
            found = found[:size]
            valid[k] = len(found)
            for j, (sc, c, box) in enumerate(found):
                out_boxes[k, j] = np.clip(box, 0, 1) if clip_boxes else box
                out_scores[k, j], out_classes[k, j] = sc, c
        return out_boxes, out_scores, out_classes, valid
    return tuple(_host(run, [boxes, scores], [_dtypes.float32] * 3 + [_dtypes.int32],
                       [[-1, size, 4], [-1, size], [-1, size], [-1]]))


def crop_and_resize(image, boxes, box_indices, crop_size, method="bilinear", extrapolation_value=0.0, name=None):
    """[num_boxes, crop_height, crop_width, depth] float32 crops: box k (normalized [y1, x1, y2, x2]) of image
    box_indices[k], sampled at crop_size points (TF's sampling: y1 (h-1) + i (y2 - y1)(h-1)/(crop_h - 1)),
    bilinear or nearest; points outside the image take extrapolation_value. Gradients reach the image."""
    from .._ops import (add, cast, constant, expand_dims, floor, gather_nd, logical_and, greater_equal, less_equal,
                        maximum, minimum, multiply, stack, subtract, where, zeros_like)
    image = cast(_t(image), _dtypes.float32)
    boxes = cast(_t(boxes), _dtypes.float32)
    box_indices = cast(_t(box_indices), _dtypes.int32)
    if method not in ("bilinear", "nearest"):
        raise ValueError(f"method must be 'bilinear' or 'nearest', got {method!r}")
    crop_h, crop_w = _static_ints(crop_size, "crop_size")
    if crop_h <= 0 or crop_w <= 0:
        raise ValueError("crop_size must be positive")
    height, width = image.shape[1], image.shape[2]
    hf, wf = float(height - 1), float(width - 1)

    def points(lo, hi, n, extent):
        steps = constant(np.arange(n, dtype=np.float32) / max(n - 1, 1))
        span = subtract(hi, lo) * extent
        start = lo * extent if n > 1 else (lo + hi) * 0.5 * extent
        return add(expand_dims(start, 1), expand_dims(span if n > 1 else zeros_like(span), 1) * steps)
    ys = points(boxes[:, 0], boxes[:, 2], crop_h, hf)  # [boxes, crop_h]
    xs = points(boxes[:, 1], boxes[:, 3], crop_w, wf)  # [boxes, crop_w]
    inside = logical_and(expand_dims(logical_and(greater_equal(ys, 0.0), less_equal(ys, hf)), 2),
                         expand_dims(logical_and(greater_equal(xs, 0.0), less_equal(xs, wf)), 1))  # [boxes, h, w]
    bidx = expand_dims(expand_dims(box_indices, 1), 2) + zeros_like(cast(inside, _dtypes.int32))

    def sample(yi, xi):
        yi = minimum(maximum(cast(yi, _dtypes.int32), 0), height - 1)
        xi = minimum(maximum(cast(xi, _dtypes.int32), 0), width - 1)
        yy = expand_dims(yi, 2) + zeros_like(expand_dims(xi, 1))
        xx = expand_dims(xi, 1) + zeros_like(expand_dims(yi, 2))
        return gather_nd(image, stack([bidx, yy, xx], axis=-1))  # [boxes, h, w, depth]
    if method == "nearest":
        # TF's kernel rounds with roundf (halves away from zero, so up: the points used are >= 0), not to even
        crops = sample(floor(ys + 0.5), floor(xs + 0.5))
    else:
        y0, x0 = floor(ys), floor(xs)
        dy = expand_dims(expand_dims(subtract(ys, y0), 2), 3)
        dx = expand_dims(expand_dims(subtract(xs, x0), 1), 3)
        top_left, bottom_left = sample(y0, x0), sample(y0 + 1, x0)
        top = add(top_left, multiply(subtract(sample(y0, x0 + 1), top_left), dx))
        bottom = add(bottom_left, multiply(subtract(sample(y0 + 1, x0 + 1), bottom_left), dx))
        crops = add(top, multiply(subtract(bottom, top), dy))
    fill = zeros_like(crops) + constant(float(extrapolation_value), dtype=_dtypes.float32)
    return where(expand_dims(inside, 3), crops, fill)


# TF's kernel's table when no colors are given: yellow, blue, red, lime, purple, olive, maroon, navy, aqua, fuchsia
_DEFAULT_BOX_COLORS = [[1, 1, 0, 1], [0, 0, 1, 1], [1, 0, 0, 1], [0, 1, 0, 1], [0.5, 0, 0.5, 1], [0.5, 0.5, 0, 1],
                       [0.5, 0, 0, 1], [0, 0, 0.5, 1], [0, 1, 1, 1], [1, 0, 1, 1]]


def draw_bounding_boxes(images, boxes, colors, name=None):
    """images [batch, h, w, depth] (float) with each box's outline ([y1, x1, y2, x2] normalized) drawn in the
    colors, cycled per box (TF's kernel: rows and columns at floor(coordinate * (size - 1)))."""
    images, boxes = _t(images), _t(boxes, dtype=_dtypes.float32)
    colors = _t(colors if colors is not None else _DEFAULT_BOX_COLORS, dtype=_dtypes.float32)
    depth = images.shape[-1] if images.shape.rank == 4 else None
    if depth is not None and depth not in (1, 3, 4):  # TF's kernel checks these two before drawing
        raise _C.InvalidArgumentError("Channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA)")
    if depth is not None and colors.shape.rank == 2 and colors.shape[1] is not None and colors.shape[1] < depth:
        raise _C.InvalidArgumentError(f"colors must have equal or more channels than the image provided: "
                                      f"{colors.shape}")

    def run(img, bx, col):
        out = np.array(img, copy=True)
        h, w, depth = out.shape[1:]
        for k in range(out.shape[0]):
            for j, box in enumerate(bx[k]):
                color = col[j % len(col)][:depth]
                y1, x1 = int(np.floor(min(box[0], box[2]) * (h - 1))), int(np.floor(min(box[1], box[3]) * (w - 1)))
                y2, x2 = int(np.floor(max(box[0], box[2]) * (h - 1))), int(np.floor(max(box[1], box[3]) * (w - 1)))
                if y1 >= h or x1 >= w or y2 < 0 or x2 < 0:
                    continue
                yc1, yc2, xc1, xc2 = max(y1, 0), min(y2, h - 1), max(x1, 0), min(x2, w - 1)
                for y in (y1, y2):
                    if 0 <= y < h:
                        out[k, y, xc1:xc2 + 1] = color
                for x in (x1, x2):
                    if 0 <= x < w:
                        out[k, yc1:yc2 + 1, x] = color
        return (out,)
    return _host(run, [images, boxes, colors], [images.dtype], [None])[0]


def _jpeg_shape(data):
    """(height, width, components) from a JPEG's SOF marker."""
    data = bytes(data)
    if data[:2] != b"\xff\xd8":
        raise _C.InvalidArgumentError("Not a valid JPEG file.")
    pos = 2
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            pos += 1
            continue
        marker = data[pos + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            pos += 2
            continue
        length = int.from_bytes(data[pos + 2:pos + 4], "big")
        if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
            height = int.from_bytes(data[pos + 5:pos + 7], "big")
            width = int.from_bytes(data[pos + 7:pos + 9], "big")
            return height, width, data[pos + 9]
        pos += 2 + length
    raise _C.InvalidArgumentError("Invalid JPEG data or crop window, data size")


def extract_jpeg_shape(contents, output_type=_dtypes.int32, name=None):
    """[height, width, channels] of a JPEG image, read from its header without decoding it."""
    contents = _t(contents)
    dtype = _dtypes.as_dtype(output_type)
    return _host(lambda c: (np.asarray(_jpeg_shape(c.item() if hasattr(c, "item") else c), dtype.as_numpy_dtype),),
                 [contents], [dtype], [[3]])[0]


def decode_and_crop_jpeg(contents, crop_window, channels=0, ratio=1, fancy_upscaling=True,
                         try_recover_truncated=False, acceptable_fraction=1, dct_method="", name=None):
    """The JPEG decoded, then cropped to crop_window [y, x, height, width] (which must lie inside it)."""
    from ._codecs import decode_jpeg
    from ._geometry import crop_to_bounding_box
    image = decode_jpeg(contents, channels, ratio, fancy_upscaling, try_recover_truncated, acceptable_fraction,
                        dct_method)
    y, x, h, w = _static_ints(crop_window, "crop_window")
    height, width = image.shape[0], image.shape[1]
    if y < 0 or x < 0 or h <= 0 or w <= 0 or y + h > height or x + w > width:
        raise _C.InvalidArgumentError(f"Invalid JPEG data or crop window, data size {height}x{width}, crop window "
                                      f"[{y}, {x}, {h}, {w}]")
    return crop_to_bounding_box(image, y, x, h, w)
