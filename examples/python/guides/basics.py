"""TensorFlow's guide "basics" (tensorflow/docs, site/en/guide/basics.ipynb @7c36502), run on Kiln: the notebook's code cells in order, only the import changed
(`import kiln as tf`); a cell's last bare expression, which the notebook displays, goes through `display`
(marked "Kiln:"), which prints its repr as IPython does.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/guides/basics.py"""


def display(value):
    if value is not None:
        print(repr(value))

# ---- cell 6
import kiln as tf

x = tf.constant([[1., 2., 3.],
                 [4., 5., 6.]])

print(x)
print(x.shape)
print(x.dtype)

# ---- cell 9
display(x + x)  # Kiln: shown, as the notebook displays it

# ---- cell 10
display(5 * x)  # Kiln: shown, as the notebook displays it

# ---- cell 11
display(x @ tf.transpose(x))  # Kiln: shown, as the notebook displays it

# ---- cell 12
display(tf.concat([x, x, x], axis=0))  # Kiln: shown, as the notebook displays it

# ---- cell 13
display(tf.nn.softmax(x, axis=-1))  # Kiln: shown, as the notebook displays it

# ---- cell 14
display(tf.reduce_sum(x))  # Kiln: shown, as the notebook displays it

# ---- cell 16
display(tf.convert_to_tensor([1,2,3]))  # Kiln: shown, as the notebook displays it

# ---- cell 17
display(tf.reduce_sum([1,2,3]))  # Kiln: shown, as the notebook displays it

# ---- cell 19
if tf.config.list_physical_devices('GPU'):
  print("TensorFlow **IS** using the GPU")
else:
  print("TensorFlow **IS NOT** using the GPU")

# ---- cell 22
var = tf.Variable([0.0, 0.0, 0.0])

# ---- cell 23
display(var.assign([1, 2, 3]))  # Kiln: shown, as the notebook displays it

# ---- cell 24
display(var.assign_add([1, 1, 1]))  # Kiln: shown, as the notebook displays it

# ---- cell 27
x = tf.Variable(1.0)

def f(x):
  y = x**2 + 2*x - 5
  return y

# ---- cell 28
display(f(x))  # Kiln: shown, as the notebook displays it

# ---- cell 30
with tf.GradientTape() as tape:
  y = f(x)

g_x = tape.gradient(y, x)  # g(x) = dy/dx

display(g_x)  # Kiln: shown, as the notebook displays it

# ---- cell 34
@tf.function
def my_func(x):
  print('Tracing.\n')
  return tf.reduce_sum(x)

# ---- cell 36
x = tf.constant([1, 2, 3])
display(my_func(x))  # Kiln: shown, as the notebook displays it

# ---- cell 38
x = tf.constant([10, 9, 8])
display(my_func(x))  # Kiln: shown, as the notebook displays it

# ---- cell 40
x = tf.constant([10.0, 9.1, 8.2], dtype=tf.float32)
display(my_func(x))  # Kiln: shown, as the notebook displays it

# ---- cell 45
class MyModule(tf.Module):
  def __init__(self, value):
    self.weight = tf.Variable(value)

  @tf.function
  def multiply(self, x):
    return x * self.weight

# ---- cell 46
mod = MyModule(3)
display(mod.multiply(tf.constant([1, 2, 3])))  # Kiln: shown, as the notebook displays it

# ---- cell 48
save_path = './saved'
display(tf.saved_model.save(mod, save_path))  # Kiln: shown, as the notebook displays it

# ---- cell 50
reloaded = tf.saved_model.load(save_path)
display(reloaded.multiply(tf.constant([1, 2, 3])))  # Kiln: shown, as the notebook displays it

# ---- cell 54
import matplotlib
from matplotlib import pyplot as plt

matplotlib.rcParams['figure.figsize'] = [9, 6]

# ---- cell 55
x = tf.linspace(-2, 2, 201)
x = tf.cast(x, tf.float32)

def f(x):
  y = x**2 + 2*x - 5
  return y

y = f(x) + tf.random.normal(shape=[201])

plt.plot(x.numpy(), y.numpy(), '.', label='Data')
plt.plot(x, f(x), label='Ground truth')
plt.legend();

# ---- cell 57
class Model(tf.Module):

  def __init__(self):
    # Randomly generate weight and bias terms
    rand_init = tf.random.uniform(shape=[3], minval=0., maxval=5., seed=22)
    # Initialize model parameters
    self.w_q = tf.Variable(rand_init[0])
    self.w_l = tf.Variable(rand_init[1])
    self.b = tf.Variable(rand_init[2])
  
  @tf.function
  def __call__(self, x):
    # Quadratic Model : quadratic_weight * x^2 + linear_weight * x + bias
    return self.w_q * (x**2) + self.w_l * x + self.b

# ---- cell 59
quad_model = Model()

# ---- cell 60
def plot_preds(x, y, f, model, title):
  plt.figure()
  plt.plot(x, y, '.', label='Data')
  plt.plot(x, f(x), label='Ground truth')
  plt.plot(x, model(x), label='Predictions')
  plt.title(title)
  plt.legend()

# ---- cell 61
display(plot_preds(x, y, f, quad_model, 'Before training'))  # Kiln: shown, as the notebook displays it

# ---- cell 63
def mse_loss(y_pred, y):
  return tf.reduce_mean(tf.square(y_pred - y))

# ---- cell 65
batch_size = 32
dataset = tf.data.Dataset.from_tensor_slices((x, y))
dataset = dataset.shuffle(buffer_size=x.shape[0]).batch(batch_size)

# ---- cell 66
# Set training parameters
epochs = 100
learning_rate = 0.01
losses = []

# Format training loop
for epoch in range(epochs):
  for x_batch, y_batch in dataset:
    with tf.GradientTape() as tape:
      batch_loss = mse_loss(quad_model(x_batch), y_batch)
    # Update parameters with respect to the gradient calculations
    grads = tape.gradient(batch_loss, quad_model.variables)
    for g,v in zip(grads, quad_model.variables):
        v.assign_sub(learning_rate*g)
  # Keep track of model loss per epoch
  loss = mse_loss(quad_model(x), y)
  losses.append(loss)
  if epoch % 10 == 0:
    print(f'Mean squared error for step {epoch}: {loss.numpy():0.3f}')

# Plot model results
print("\n")
plt.plot(range(epochs), losses)
plt.xlabel("Epoch")
plt.ylabel("Mean Squared Error (MSE)")
plt.title('MSE loss vs training iterations');

# ---- cell 68
display(plot_preds(x, y, f, quad_model, 'After training'))  # Kiln: shown, as the notebook displays it

# ---- cell 71
new_model = tf.keras.Sequential([
    tf.keras.layers.Lambda(lambda x: tf.stack([x, x**2], axis=1)),
    tf.keras.layers.Dense(units=1, kernel_initializer=tf.random.normal)])

# ---- cell 72
new_model.compile(
    loss=tf.keras.losses.MSE,
    optimizer=tf.keras.optimizers.SGD(learning_rate=0.01))

history = new_model.fit(x, y,
                        epochs=100,
                        batch_size=32,
                        verbose=0)

display(new_model.save('./my_new_model.keras'))  # Kiln: shown, as the notebook displays it

# ---- cell 74
plt.plot(history.history['loss'])
plt.xlabel('Epoch')
plt.ylim([0, max(plt.ylim())])
plt.ylabel('Loss [Mean Squared Error]')
plt.title('Keras training progress');

# ---- cell 75
display(plot_preds(x, y, f, new_model, 'After Training: Keras'))  # Kiln: shown, as the notebook displays it
