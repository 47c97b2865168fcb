"""kiln.mixed_precision (tf.mixed_precision). TF 2.15's holds only `experimental`, the graph-rewrite and loss
scale API that TF 1 programs used; TF 2 code uses tf.keras.mixed_precision (policies, LossScaleOptimizer),
which Kiln has."""
