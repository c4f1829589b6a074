# KernelBench level 1 (ReLU) at its shape: a control, already at the copy rate in ATen.
import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(4096, 393216)]


def get_init_inputs():
    return []
