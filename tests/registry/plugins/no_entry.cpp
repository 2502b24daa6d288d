// A shared library that exports something, but not wheelfit_backend_entry.
#include <boost/config.hpp>

extern "C" BOOST_SYMBOL_EXPORT int wheelfit_something_else(void) { return 42; }
