# KernelBench level 1, problem 22 (tanh), at KernelBench's own shape: x (4096, 393216) float32, uniform [0, 1).
import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.tanh(x)


def get_inputs():
    return [torch.rand(4096, 393216)]


def get_init_inputs():
    return []
