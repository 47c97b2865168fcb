"""main.py of TensorFlow's tutorial "Multi-worker training with Keras" (tensorflow/docs,
site/en/tutorials/distribute/multi_worker_with_keras.ipynb @7c36502, the file its cell 43 writes), run on
Kiln: only the import changed (`import kiln as tf`). The tutorial starts one process per
worker with TF_CONFIG naming the cluster; on Kiln the workers are MPI ranks, started together (TF_CONFIG is
read by this program for the worker count, and ignored by the strategy):

    cd examples/python/tutorials/distribute/multi_worker
    TF_CONFIG='{"cluster": {"worker": ["localhost:12345", "localhost:23456"]}, "task": {"type": "worker", "index": 0}}' \
        PYTHONPATH=../../../../../build/python mpirun -np 2 /usr/bin/python3 main.py"""
import os
import json

import kiln as tf
import mnist_setup

per_worker_batch_size = 64
tf_config = json.loads(os.environ['TF_CONFIG'])
num_workers = len(tf_config['cluster']['worker'])

strategy = tf.distribute.MultiWorkerMirroredStrategy()

global_batch_size = per_worker_batch_size * num_workers
multi_worker_dataset = mnist_setup.mnist_dataset(global_batch_size)

with strategy.scope():
  # Model building/compiling need to be within `strategy.scope()`.
  multi_worker_model = mnist_setup.build_and_compile_cnn_model()


multi_worker_model.fit(multi_worker_dataset, epochs=3, steps_per_epoch=70)
