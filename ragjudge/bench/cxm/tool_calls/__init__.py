"""`cxm-tool-calls`: call the right tools among 16 to 128 offered (the paper's Table 9)."""
