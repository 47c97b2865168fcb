"""keras.io's programs under examples/python/keras (their code with only the import changed, small synthetic data)
run to the end and print what keras.io shows: summaries' parameter counts, fit's figures and History keys, the
directory datasets' lines, and losses that fall while they train."""
import re

from keras_util import run_example, without_progress


def run_program(name):
    return without_progress(run_example("keras", name))


def epoch_figures(out, key):
    return [float(v) for v in re.findall(rf"Epoch \d+/\d+\n\d+/\d+ \[=+\] - .*? - {key}: ([\d.]+)", out)]


def test_mnist_convnet():
    out = run_program("mnist_convnet.py")
    assert "x_train shape: (1200, 28, 28, 1)\n1200 train samples\n300 test samples" in out
    assert "Total params: 34826 (136.04 KB)" in out  # keras.io's summary of this model (Keras 2.15's layout)
    for name, shape, params in (("conv2d (Conv2D)", "(None, 26, 26, 32)", "320"),
                                ("conv2d_1 (Conv2D)", "(None, 11, 11, 64)", "18496"),
                                ("flatten (Flatten)", "(None, 1600)", "0"), ("dense (Dense)", "(None, 10)", "16010")):
        assert re.search(rf"^ {re.escape(name)}\s+{re.escape(shape)}\s+{params}\s*$", out, re.M), name
    losses = epoch_figures(out, "loss")
    assert len(losses) == 3 and losses[-1] < losses[0]
    assert re.search(r"val_loss: [\d.]+ - val_accuracy: [\d.]+", out)
    assert float(re.search(r"Test accuracy: ([\d.]+)", out).group(1)) > 0.5


def test_writing_a_training_loop_from_scratch():
    out = run_program("writing_a_training_loop_from_scratch.py")
    assert out.count("Start of epoch 0") == 3 and out.count("Seen so far: 64 samples") == 6
    accs = [float(v) for v in re.findall(r"Training acc over epoch: ([\d.]+)", out)]
    assert len(accs) == 4 and len(re.findall(r"Validation acc: [\d.]+\nTime taken: [\d.]+s", out)) == 4
    assert 'Model: "discriminator"' in out and "Total params: 74625 (291.50 KB)" in out
    assert " global_max_pooling2d (Glob  (None, 128)" in out
    assert re.search(r"discriminator loss at step 0: [\d.]+\nadversarial loss at step 0: [\d.]+", out)


def test_training_with_built_in_methods():
    out = run_program("training_with_built_in_methods.py")
    history = re.search(r"^\{'loss': \[.*\]\}$", out, re.M).group(0)
    assert re.fullmatch(r"\{'loss': \[[\d., ]+\], 'sparse_categorical_accuracy': \[[\d., ]+\], 'val_loss': "
                        r"\[[\d., ]+\], 'val_sparse_categorical_accuracy': \[[\d., ]+\]\}", history)
    assert re.search(r"test loss, test acc: \[[\d.]+, [\d.]+\]", out)
    assert "predictions shape: (3, 10)" in out
    assert re.search(r"categorical_true_positives: [\d.]+", out)
    # add_metric in a layer and on the functional model's tensors; the add_loss penalty raises the loss.
    assert len(re.findall(r"loss: [\d.]+ - std_of_activation: [\d.]+", out)) == 2
    assert re.search(r"loss: [\d.]+ - score_output_loss: [\d.]+ - class_output_loss: [\d.]+",
                     out)
    assert re.search(r"\{'loss': [\d.]+, 'sparse_categorical_accuracy': [\d.]+\}", out)  # dict(zip(metrics_names,..))
    assert "Epoch 1: val_loss improved from inf to" in out and ", saving model to mymodel_1" in out
    assert "Creating a new model" in out and re.search(r"Restoring from \./ckpt/ckpt-loss=[\d.]+", out)
    losses = epoch_figures(out, "loss")
    assert losses[1] < losses[0]  # the first fit learns


def test_text_classification_from_scratch():
    out = run_program("text_classification_from_scratch.py")
    assert ("Found 400 files belonging to 2 classes.\nUsing 320 files for training.\n"
            "Found 400 files belonging to 2 classes.\nUsing 80 files for validation.\n"
            "Found 100 files belonging to 2 classes.") in out
    assert ("Number of batches in raw_train_ds: 10\nNumber of batches in raw_val_ds: 3\n"
            "Number of batches in raw_test_ds: 4") in out
    assert re.search(r"^b'.*<br /><br />.*'\n[01]$", out, re.M)  # a raw review, then its label
    losses = epoch_figures(out, "loss")
    assert len(losses) == 3 and losses[-1] < losses[0]
    evaluations = re.findall(r"^4/4 \[=+\] - .*? - loss: ([\d.]+) - accuracy: ([\d.]+)", out, re.M)
    assert len(evaluations) == 2 and evaluations[0] == evaluations[1]  # the end-to-end model scores the same
    # This revision names class_names=["pos", "neg"] for the training and validation sets only; the test set's
    # labels are inferred alphabetically (neg=0, pos=1), the opposite order, so a classifier that learned
    # scores near 0 on it, as it would in Keras.
    assert float(re.findall(r"val_accuracy: ([\d.]+)", out)[-1]) > 0.7
    assert float(evaluations[0][1]) < 0.3


def test_serialization_and_saving():
    out = run_program("serialization_and_saving.py")
    assert "['config.json', 'kiln_python.json', 'metadata.json', 'model.weights.h5', 'saved_model.json'" in out
    # A subclassed model loads without its class, revived from the SavedModel's call trace, as in TF.
    assert re.search(r"^Model loaded without the custom object class: <kiln\.keras\.saving\.legacy\.saved_model\."
                     r"load\.CustomModel object '\w+'>$", out, re.M)
    # tf.train.Checkpoint keys by attribute path, not variable name ("var", not "var_a").
    assert ("'layer/var/.ATTRIBUTES/VARIABLE_VALUE': kiln.int32, "
            "'save_counter/.ATTRIBUTES/VARIABLE_VALUE': kiln.int64}") in out
    assert 'Model: "pretrained_model"' in out and " pretrained (Functional)     (None, 64)                54400" in out
    assert "Total params: 54725 (213.77 KB)" in out
    # Freezing a nested layer moves its weights after the trainable ones (Keras' order).
    assert "variable ordering changed: True" in out
    assert "variables: ['dense_2/kernel:0', 'dense_2/bias:0', 'dense_1/kernel:0', 'dense_1/bias:0']" in out


def test_making_new_layers_and_models_via_subclassing():
    out = run_program("making_new_layers_and_models_via_subclassing.py")
    assert "[2. 2.]\n[4. 4.]\nweights: 1\nnon-trainable weights: 1\ntrainable_weights: []" in out
    assert "weights: 6\ntrainable weights: 6" in out
    assert re.search(r"^\[<kiln\.Tensor: shape=\(\), dtype=float32, numpy=[\d.e-]+>\]$", out, re.M)  # layer.losses
    # A model whose only loss is add_loss and that has nothing to train still fits (Keras: a no-op update).
    assert len(re.findall(r"^1/1 \[=+\] - \d+s \d+\w+/step - loss: [\d.]+$", out, re.M)) == 2
    assert "{'units': 64}\n{'name': 'linear_7', 'trainable': True, 'dtype': 'float32', 'units': 64}" in out
    means = [float(v) for v in re.findall(r"step 0: mean loss = ([\d.]+)", out)]
    assert len(means) == 2 and means[1] < means[0]
    losses = epoch_figures(out, "loss")
    assert losses[-1] < losses[-2]  # the VAE's fit


def test_dcgan_overriding_train_step():
    out = run_program("dcgan_overriding_train_step.py")
    assert 'Model: "discriminator"' in out and 'Model: "generator"' in out
    # keras.io's summaries (in Keras 2.15's layout)
    assert "Total params: 74625 (291.50 KB)" in out and "Total params: 1339905 (5.11 MB)" in out
    # train_step gets each batch tensor itself and returns its own logs: d_loss and g_loss per epoch.
    epochs = re.findall(r"^Epoch (\d)/2\n8/8 \[=+\] - \d+s \d+\w+/step - d_loss: ([\d.]+) - g_loss: ([\d.]+)", out,
                        re.M)
    assert [e[0] for e in epochs] == ["1", "2"]
    assert out.rstrip().endswith("['generated_img_0_0.png', 'generated_img_0_1.png', 'generated_img_1_0.png', "
                                 "'generated_img_1_1.png', 'generated_img_2_0.png', 'generated_img_2_1.png']")


def test_sequential_model():
    out = run_program("sequential_model.py")
    assert "\n2\n[]\n" in out  # len(model.layers) after pop(); a layer has no weights before its first call
    assert re.search(r"<kiln\.Variable 'dense_\d+/kernel:0' shape=\(4, 3\) dtype=float32", out)
    assert "Number of weights after calling the model: 6" in out
    # The add() + summary() debugging workflow: the shapes keras.io shows.
    # Keras 2.15 wraps a name longer than its column onto the next line.
    assert " max_pooling2d (MaxPooling2  (None, 40, 40, 32)        0         \n D)  " in out
    assert " max_pooling2d_2 (MaxPoolin  (None, 4, 4, 32)          0         \n g2D)  " in out
    assert "Total params: 11680 (45.62 KB)" in out and "Total params: 48672 (190.12 KB)" in out
    assert out.rstrip().endswith("(1, 121, 121, 32)")  # the intermediate layer's output, via layer.output


def test_transfer_learning():
    # keras.applications.ResNet50(weights=None) as the frozen base, then fine-tuned (see the program's docstring)
    out = run_program("transfer_learning.py")
    lines = out.splitlines()
    assert lines[:9] == ["weights: 2", "trainable_weights: 2", "non_trainable_weights: 0", "weights: 4",
                         "trainable_weights: 2", "non_trainable_weights: 2", "weights: 2", "trainable_weights: 0",
                         "non_trainable_weights: 2"]
    # Frozen base: only the new Dense(1) on 2048 features trains; unfrozen: all but BatchNormalization's statistics.
    assert "Trainable params: 2049 (8.00 KB)\nNon-trainable params: 23587712 (89.98 MB)" in out
    assert "Trainable params: 23536641 (89.79 MB)\nNon-trainable params: 53120 (207.50 KB)" in out
    assert "frozen base unchanged: True" in out and "fine-tuning moved the base: True" in out
    assert "batchnorm statistics kept (training=False): True" in out
    losses = [float(v) for v in re.findall(r"^6/6 - \d+s - loss: ([\d.]+)", out, re.M)]
    assert len(losses) == 23 and losses[-1] < losses[19] < losses[0]
    assert float(re.search(r"validation accuracy: ([\d.]+)", out).group(1)) >= 0.75


def test_working_with_rnns(tmp_path):
    from keras_util import synthetic_mnist
    synthetic_mnist(str(tmp_path), train=400, test=100)
    out = without_progress(run_example("keras", "working_with_rnns.py", env={"KILN_MNIST_DIR": str(tmp_path)}))
    for name, shape, params in (("embedding (Embedding)", "(None, None, 64)", "64000"),
                                ("lstm (LSTM)", "(None, 128)", "98816"), ("gru (GRU)", "(None, None, 256)", "247296"),
                                ("simple_rnn (SimpleRNN)", "(None, 128)", "49280"),
                                ("decoder (LSTM)", "(None, 64)", "33024")):
        assert re.search(rf"^ {re.escape(name)}\s+{re.escape(shape)}\s+{params}\s", out, re.M), name
    assert "Total params: 164106 (641.04 KB)" in out and "Total params: 361866 (1.38 MB)" in out
    assert "Total params: 258698 (1010.54 KB)" in out and "Total params: 80266 (313.54 KB)" in out
    assert re.search(r"^ encoder \(LSTM\)\s+\[\(None, 64\),\s+33024\s+\['embedding_2\[0\]\[0\]'\]", out, re.M)
    assert re.search(r"^Predicted result is: \[\d\], target result is: \d$", out, re.M)
    # The nested cell's model: one loss and one metric per output, named as Keras names a layer's outputs.
    assert re.search(r"2/2 \[=+\] - .* - loss: [\d.]+ - rnn_1_loss: [\d.]+ - rnn_1_1_loss: [\d.]+ - "
                     r"rnn_1_accuracy: [\d.]+ - rnn_1_1_accuracy: [\d.]+", out)


def test_understanding_masking_and_padding():
    out = run_program("understanding_masking_and_padding.py")
    assert out.startswith("[[ 711  632   71    0    0    0]\n [  73    8 3215   55  927    0]\n"
                          " [  83   91    1  645 1253  927]]\n")
    padded_mask = ("[[ True  True  True False False False]\n [ True  True  True  True  True False]\n"
                   " [ True  True  True  True  True  True]], shape=(3, 6), dtype=bool)")
    assert out.count(padded_mask) == 2  # Embedding(mask_zero=True) and Masking agree
    assert ("[[ True  True  True]\n [ True  True  True]\n [ True  True  True]], shape=(3, 3), dtype=bool)\n"
            "kiln.Tensor(\n[[False False False]\n [ True  True False]\n [ True  True  True]], shape=(3, 3), "
            "dtype=bool)") in out  # TemporalSplit's two halves of the mask
    assert re.search(r"shape=\(3, 10\), dtype=bool\)\nMask found: KerasTensor\(type_spec=TensorSpec\(shape=\(None, "
                     r"None\), dtype=tf.bool, name=None\), description=\"created by layer 'embedding_\d+'\"\)", out)


def test_structured_data_classification_with_feature_space():
    out = run_program("structured_data_classification_with_feature_space.py")
    assert "(303, 14)\n" in out and "Using 242 samples for training and 61 for validation" in out
    assert re.search(r"^Input: \{'age': <kiln.Tensor: shape=\(\), dtype=int64, numpy=\d+>, 'sex': ", out, re.M)
    assert re.search(r"'thal': <kiln.Tensor: shape=\(\), dtype=string, numpy=b'\w+'>\}\nTarget: kiln.Tensor\([01], "
                     r"shape=\(\), dtype=int64\)", out)
    # 2 + 5 + 2 + 3 + 2 + 4 one-hot integer features, thal's 3 strings, 30 age bins, 5 normalized floats, and
    # the crosses' 64 + 16 bins (the real heart.csv has 2 more thal values, hence keras.io's wider vector).
    assert "preprocessed_x.shape: (32, 136)\npreprocessed_x.dtype: <dtype: 'float32'>" in out
    assert 'was not an Input tensor, it was generated by layer "concatenate"' in out  # Keras' warning
    epochs = re.findall(r"^8/8 - \d+s - loss: ([\d.]+) - accuracy: ([\d.]+) - val_loss: ([\d.]+) - val_accuracy: "
                        r"([\d.]+) - \d+ms/epoch - \d+ms/step$", out, re.M)
    assert len(epochs) == 20 and float(epochs[-1][0]) < float(epochs[0][0])
    assert float(epochs[-1][3]) > 0.6  # the synthetic target follows cp, exang and thal
    assert re.search(r"^This particular patient had a \d+\.\d\d% probability of having a heart disease, as "
                     r"evaluated by our model\.$", out, re.M)
