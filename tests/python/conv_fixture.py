"""A small layer-graph manifest for the Python tests: conv 3x3 stride 2 pad 1 (1 -> 2 channels, relu) on
1 x 8 x 8 images, average pooling 2, flatten, linear 8 -> 3; weights drawn from `rng`, written as safetensors
the way safetensors.torch.save_file lays them out."""
import json
import os
import struct


def write_conv_net(folder, rng):
    """Writes cnn.json and cnn.safetensors into folder; returns the manifest's path."""
    import numpy as np
    tensors = {"c1.weight": rng.uniform(-1, 1, (2, 1, 3, 3)), "c1.bias": rng.uniform(0, 0.5, 2),
               "fc.weight": rng.uniform(-1, 1, (3, 8)), "fc.bias": np.zeros(3)}
    header, blob = {}, b""
    for name, t in tensors.items():
        b = np.ascontiguousarray(t, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [len(blob), len(blob) + len(b)]}
        blob += b
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(os.path.join(folder, "cnn.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + blob)
    net = os.path.join(folder, "cnn.json")
    with open(net, "w") as f:
        json.dump({"format": "ctmc-snn-mlp", "version": 1, "weights": "cnn.safetensors", "input": [1, 8, 8],
                   "layers": [{"type": "conv2d", "weight": "c1.weight", "bias": "c1.bias", "in_channels": 1,
                               "out_channels": 2, "kernel_size": 3, "stride": 2, "padding": 1, "activation": "relu"},
                              {"type": "avgpool2d", "kernel_size": 2},
                              {"type": "flatten"},
                              {"type": "linear", "weight": "fc.weight", "bias": "fc.bias", "in": 8, "out": 3}]}, f)
    return net
