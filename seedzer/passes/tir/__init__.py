"""The TIR pass family: the catalogue of TIR passes and the contracts that plan a sequence into TVM's pipeline."""
