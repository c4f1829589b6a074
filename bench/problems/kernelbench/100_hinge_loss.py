# KernelBench level 1, problem 100 (mean of clamp(1 - predictions * targets, min 0), targets +-1 per row), at KernelBench's own shape: predictions (32768, 32768), targets (32768,).
import torch


class Model(torch.nn.Module):
    def forward(self, predictions, targets):
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))


def get_inputs():
    return [torch.rand(32768, 32768), torch.randint(0, 2, (32768,)).float() * 2 - 1]


def get_init_inputs():
    return []
