"""The pass catalog and the reference passes from ExecuTorch's pass-writing guide."""
