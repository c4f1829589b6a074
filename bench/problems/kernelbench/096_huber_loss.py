# KernelBench level 1, problem 96 (smooth L1 loss), at KernelBench's own shape: predictions, targets (32768, 32768).
import torch


class Model(torch.nn.Module):
    def forward(self, predictions, targets):
        return torch.nn.functional.smooth_l1_loss(predictions, targets)


def get_inputs():
    return [torch.rand(32768, 32768) * torch.rand(()), torch.rand(32768, 32768)]


def get_init_inputs():
    return []
