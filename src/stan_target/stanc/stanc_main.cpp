// pemc-stanc: Stan 2.21's compiler (stanc2), built from the compiler sources Debian's
// r-cran-stanheaders ships (stan/lang, stan/command/stanc_helper.hpp), so that compiling a Stan
// model needs no R. The Stan target's builder (src/stan_target/model_builder.cpp) runs it.
#include <stan/command/stanc_helper.hpp>

#include <iostream>

int main(int argc, const char* argv[]) { return stanc_helper(argc, argv, &std::cout, &std::cerr); }
