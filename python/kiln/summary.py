"""kiln.summary (tf.summary): placeholder until the event writer lands."""
