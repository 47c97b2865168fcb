"""kiln.image (tf.image): resizing (the engine's ResizeImage op), crops, pads, flips and rotations, colour
adjustments and conversions, random augmentations (stateful and stateless), PNG/JPEG codecs, and image metrics
(psnr, ssim, gradients, Sobel, total variation), with TF 2.15's names, arguments and dtype rules."""
from ._codecs import (adjust_jpeg_quality, decode_image, decode_jpeg, decode_png, encode_jpeg, encode_png,  # noqa: F401
                      is_jpeg)
from ._color import (adjust_brightness, adjust_contrast, adjust_gamma, adjust_hue, adjust_saturation,  # noqa: F401
                     convert_image_dtype, grayscale_to_rgb, hsv_to_rgb, per_image_standardization, rgb_to_grayscale,
                     rgb_to_hsv, rgb_to_yuv, yuv_to_rgb, rgb_to_yiq, yiq_to_rgb)
from ._geometry import (central_crop, crop_to_bounding_box, flip_left_right, flip_up_down,  # noqa: F401
                        pad_to_bounding_box, resize_with_crop_or_pad, rot90, transpose)
from ._metrics import image_gradients, psnr, sobel_edges, ssim, ssim_multiscale, total_variation  # noqa: F401
from ._patches import extract_patches  # noqa: F401
from ._random import (random_brightness, random_contrast, random_crop, random_flip_left_right,  # noqa: F401
                      random_flip_up_down, random_hue, random_jpeg_quality, random_saturation,
                      stateless_random_brightness, stateless_random_contrast, stateless_random_crop,
                      stateless_random_flip_left_right, stateless_random_flip_up_down, stateless_random_hue,
                      stateless_random_jpeg_quality, stateless_random_saturation)
from ._resize import ResizeMethod, resize, resize_with_pad  # noqa: F401
from ._boxes import (combined_non_max_suppression, crop_and_resize, decode_and_crop_jpeg,  # noqa: F401,E402
                     draw_bounding_boxes, extract_jpeg_shape, non_max_suppression, non_max_suppression_overlaps,
                     non_max_suppression_padded, non_max_suppression_with_scores)
