"""A TensorFlow notebook as a Kiln program (examples/python/...): its code cells in order, TensorFlow's imports
replaced by Kiln's, shell and magic lines dropped, and each cell's last bare expression passed to `display`
(IPython's display of its repr). Review the result: data downloads must be shrunk or replaced by hand.

    /usr/bin/python3 scripts/notebook_to_program.py NOTEBOOK.ipynb OUT.py "TITLE" "REPO, PATH @COMMIT" NAME"""
import ast, json, re, sys

nb_path, out_path, title, source, name = sys.argv[1:6]
nb = json.load(open(nb_path))
header = (f'"""{title} ({source}), run on Kiln: the notebook\'s code cells in order, only the import changed\n'
          '(`import kiln as tf`); a cell\'s last bare expression, which the notebook displays, goes through `display`\n'
          '(marked "Kiln:"), which prints its repr as IPython does.\n\n'
          f'    PYTHONPATH=build/python /usr/bin/python3 examples/python/{name}.py"""\n\n\n'
          'def display(value):\n    if value is not None:\n        print(repr(value))\n')
out = [header]
for i, c in enumerate(nb['cells']):
    if c['cell_type'] != 'code':
        continue
    src = ''.join(c['source']).rstrip()
    if src.startswith('#@title Licensed') or not src.strip():
        continue
    src = src.replace('import tensorflow as tf', 'import kiln as tf')
    src = src.replace('from tensorflow import keras', 'from kiln import keras')
    # Any module path under tensorflow (tensorflow.keras, tensorflow.experimental.numpy) is Kiln's.
    src = re.sub(r'^(\s*(?:from|import)\s+)tensorflow\.', r'\1kiln.', src, flags=re.M)
    lines = [l for l in src.split('\n') if not l.lstrip().startswith(('!', '%'))]
    src = '\n'.join(lines)
    try:
        tree = ast.parse(src)
    except SyntaxError:
        out.append(f'# ---- cell {i} (not Python)\n# ' + src.replace('\n', '\n# ') + '\n')
        continue
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = tree.body[-1]
        start, end = last.lineno - 1, last.end_lineno
        is_print = isinstance(last.value, ast.Call) and getattr(last.value.func, 'id', '') == 'print'
        if not is_print and not lines[end - 1].rstrip().endswith(';'):
            stmt = '\n'.join(lines[start:end])
            lines = lines[:start] + [f'display((  # Kiln: shown, as the notebook displays it', stmt, '))'] + lines[end:]
    out.append(f'# ---- cell {i}\n' + '\n'.join(lines) + '\n')
open(out_path, 'w').write('\n'.join(out))
