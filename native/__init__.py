"""Hand-written LLVM IR runtime of adjit (the tape). Shipped in the wheel as ``adjit.native``."""
