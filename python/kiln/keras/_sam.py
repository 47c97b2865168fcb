"""keras.models.experimental.SharpnessAwareMinimization (Keras 2.15): each training step takes the gradient g at
the weights w, moves to w + rho * g / |g| (|g| the norm over every gradient), takes the gradient there, comes back
to w and applies that second gradient; with num_batch_splits, per split of the batch, the gradients summed."""
import kiln as _tf

from ._data_adapter import unpack_x_y_sample_weight
from ._model import Model


class SharpnessAwareMinimization(Model):
    def __init__(self, model, rho=0.05, num_batch_splits=None, name=None):
        super().__init__(name=name)
        self.model = model
        self.rho = rho
        self.num_batch_splits = num_batch_splits

    def call(self, inputs):
        return self.model(inputs)

    def _norm(self, gradients):
        return _tf.norm(_tf.stack([_tf.norm(g) for g in gradients if g is not None]))

    def train_step(self, data):
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        if self.num_batch_splits is not None:
            xs, ys = _tf.split(x, self.num_batch_splits), _tf.split(y, self.num_batch_splits)
        else:
            xs, ys = [x], [y]
        variables = self.model.trainable_variables
        summed, predictions = None, []
        for x_part, y_part in zip(xs, ys):
            with _tf.GradientTape() as tape:
                pred = self.model(x_part, training=True)
                loss = self.compiled_loss(y_part, pred)
            predictions.append(pred)
            gradients = tape.gradient(loss, variables)
            scale = self.rho / (self._norm(gradients) + 1e-12)
            moves = [None if g is None else g * scale for g in gradients]
            for variable, move in zip(variables, moves):
                if move is not None:
                    variable.assign_add(move)
            with _tf.GradientTape() as tape:
                loss = self.compiled_loss(y_part, self(x_part, training=True))
            gradients = tape.gradient(loss, variables)
            summed = gradients if summed is None else [a + b for a, b in zip(summed, gradients)]
            for variable, move in zip(variables, moves):  # back to w before the update
                if move is not None:
                    variable.assign_sub(move)
        self.optimizer.apply_gradients(zip(summed, variables))
        self.compiled_metrics.update_state(y, _tf.concat(predictions, 0), sample_weight)
        return {m.name: m.result() for m in self.metrics}

    def get_config(self):
        from ._serialization import serialize_keras_object
        return {"name": self.name, "model": serialize_keras_object(self.model), "rho": self.rho,
                "num_batch_splits": self.num_batch_splits}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from ._saving_lib import deserialize_model
        config = dict(config)
        model = deserialize_model(config.pop("model"), custom_objects)
        return cls(model, **config)


class experimental:  # noqa: N801 - tf.keras.models.experimental is a module in TF
    SharpnessAwareMinimization = SharpnessAwareMinimization
