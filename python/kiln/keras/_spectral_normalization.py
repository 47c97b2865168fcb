"""keras.layers.SpectralNormalization (Keras 2.15): while training, each call divides the wrapped layer's kernel
(or embeddings) by its largest singular value, estimated by power iteration from the vector u the wrapper keeps
(non-trainable, updated each time); inference calls the layer as it is. A kernel of zeros is left alone."""
from .. import _C
from ..tensor_shape import TensorShape
from . import initializers as _initializers
from ._layer import InputSpec
from ._wrappers import Wrapper


def _l2_normalize(x):
    return _C.multiply(x, _C.rsqrt(_C.maximum(_C.reduce_sum(_C.square(x), None, True), 1e-12)))


class SpectralNormalization(Wrapper):

    def __init__(self, layer, power_iterations=1, **kwargs):
        super().__init__(layer, **kwargs)
        if power_iterations <= 0:
            raise ValueError(f"`power_iterations` should be greater than zero. Received: "
                             f"`power_iterations={power_iterations}`")
        self.power_iterations = power_iterations
        self.vector_u = None

    def build(self, input_shape):
        input_shape = TensorShape(input_shape)
        if not self.layer.built:
            self.layer._maybe_build(input_shape)
        self.input_spec = InputSpec(shape=[None] + input_shape.as_list()[1:])
        kernel = getattr(self.layer, "kernel", None)
        if kernel is None:
            kernel = getattr(self.layer, "embeddings", None)
        if kernel is None:
            raise ValueError(f"{type(self.layer).__name__} object has no attribute 'kernel' nor 'embeddings'")
        self._kernel_variable = kernel
        self.kernel_shape = kernel.shape.as_list()
        self.vector_u = self.add_weight("vector_u", (1, self.kernel_shape[-1]),
                                        initializer=_initializers.TruncatedNormal(stddev=0.02), trainable=False,
                                        dtype=kernel.dtype)
        self.built = True

    def call(self, inputs, training=False):
        if training:
            self.normalize_weights()
        return self.layer(inputs)

    def compute_output_shape(self, input_shape):
        return TensorShape(self.layer.compute_output_shape(input_shape))

    def normalize_weights(self):
        """u and v from power_iterations rounds on W (the kernel as [-1, last]); sigma = v W u^T; the kernel
        becomes W / sigma and u is kept (unless W is all zeros)."""
        kernel = self._kernel_variable
        weights = _C.reshape(kernel.read_value(), [-1, self.kernel_shape[-1]])
        u = self.vector_u.read_value()
        for _ in range(self.power_iterations):
            v = _l2_normalize(_C.matmul(u, weights, False, True))
            u = _l2_normalize(_C.matmul(v, weights, False, False))
        u, v = _C.stop_gradient(u), _C.stop_gradient(v)
        sigma = _C.matmul(_C.matmul(v, weights, False, False), u, False, True)
        zero = _C.logical_not(_C.reduce_any(_C.not_equal(weights, _C.zeros_like(weights, None)), None, False))
        self.vector_u.assign(_C.where(zero, self.vector_u.read_value(), u))
        scaled = _C.reshape(_C.divide(weights, _C.reshape(sigma, [])), self.kernel_shape)
        kernel.assign(_C.where(zero, kernel.read_value(), scaled))

    def get_config(self):
        return dict(super().get_config(), power_iterations=self.power_iterations)
