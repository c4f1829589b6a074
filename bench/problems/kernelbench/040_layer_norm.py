# KernelBench level 1, problem 40 (LayerNorm over the last three dimensions (64, 256, 256)), at KernelBench's own shape: x (16, 64, 256, 256).
import torch


class Model(torch.nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = torch.nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.rand(16, 64, 256, 256)]


def get_init_inputs():
    return [(64, 256, 256)]
