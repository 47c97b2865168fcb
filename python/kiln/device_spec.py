"""tf.DeviceSpec: a device name's parts (job, replica, task, device type and index), parsed from and printed
to TF's strings ("/job:worker/replica:0/task:1/device:GPU:0"). tf.device takes one."""


def _upper_known(device_type):
    if device_type is None:
        return None
    device_type = str(device_type)
    return device_type.upper() if device_type.lower() in ("cpu", "gpu") else device_type


def _components(spec):
    """TF's parse: job/replica/task/device fields, and the legacy "/cpu:0" form."""
    job = replica = task = device_type = device_index = None
    for part in (spec or "").split("/"):
        if not part:
            continue
        fields = part.split(":")
        key = fields[0].lower()
        if key == "job" and len(fields) == 2:
            job = fields[1]
        elif key == "replica" and len(fields) == 2 and fields[1].isdigit():
            replica = int(fields[1])
        elif key == "task" and len(fields) == 2 and fields[1].isdigit():
            task = int(fields[1])
        elif key in ("cpu", "gpu") and len(fields) == 2:
            if device_type is not None and device_type != key.upper():
                raise ValueError(f"Multiple device types are not allowed while parsing the device spec: {spec}.")
            device_type = key.upper()
            device_index = None if fields[1] == "*" else int(fields[1])
        elif key == "device" and len(fields) in (2, 3):
            if device_type is not None and device_type != fields[1]:
                raise ValueError(f"Multiple device types are not allowed while parsing the device spec: {spec}.")
            device_type = _upper_known(fields[1])
            if len(fields) == 3 and fields[2] != "*":
                device_index = int(fields[2])
        else:
            raise ValueError(f"Unknown attribute: '{part}' is encountered while parsing the device spec: '{spec}'.")
    return job, replica, task, device_type, device_index


class DeviceSpec:
    """An immutable device specification; a field left None matches any."""

    __slots__ = ("_job", "_replica", "_task", "_device_type", "_device_index")

    def __init__(self, job=None, replica=None, task=None, device_type=None, device_index=None):
        self._job = None if job is None else str(job)
        self._replica = None if replica is None else int(replica)
        self._task = None if task is None else int(task)
        self._device_type = _upper_known(device_type)
        self._device_index = None if device_index is None else int(device_index)

    job = property(lambda self: self._job)
    replica = property(lambda self: self._replica)
    task = property(lambda self: self._task)
    device_type = property(lambda self: self._device_type)
    device_index = property(lambda self: self._device_index)

    @classmethod
    def from_string(cls, spec):
        return cls(*_components(spec))

    def to_string(self):
        out = ""
        if self._job is not None:
            out += f"/job:{self._job}"
        if self._replica is not None:
            out += f"/replica:{self._replica}"
        if self._task is not None:
            out += f"/task:{self._task}"
        if self._device_type is not None:
            index = "*" if self._device_index is None else self._device_index
            out += f"/device:{self._device_type}:{index}"
        return out

    def _fields(self):
        return {"job": self._job, "replica": self._replica, "task": self._task,
                "device_type": self._device_type, "device_index": self._device_index}

    def replace(self, **kwargs):
        fields = self._fields()
        fields.update(kwargs)
        return DeviceSpec(**fields)

    def make_merged_spec(self, dev):
        """This spec with `dev`'s fields where `dev` sets them."""
        fields = self._fields()
        fields.update({k: v for k, v in dev._fields().items() if v is not None})
        return DeviceSpec(**fields)

    def __eq__(self, other):
        return isinstance(other, DeviceSpec) and self.to_string() == other.to_string()

    def __hash__(self):
        return hash(self.to_string())

    def __repr__(self):
        return f"<DeviceSpec(job={self._job}, replica={self._replica}, task={self._task}, " \
               f"device_type={self._device_type}, device_index={self._device_index})>"
