# KernelBench level 1, problem 94 (mean squared error), at KernelBench's own shape: predictions, targets (32768, 32768).
import torch


class Model(torch.nn.Module):
    def forward(self, predictions, targets):
        return torch.mean((predictions - targets) ** 2)


def get_inputs():
    return [torch.rand(32768, 32768) * torch.rand(()), torch.rand(32768, 32768)]


def get_init_inputs():
    return []
