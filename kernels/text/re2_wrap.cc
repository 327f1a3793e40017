// re2_wrap.cc — RE2 behind the C functions of re2_wrap.h. No exception leaves this file:
// RE2 reports a bad pattern through ok(), and an allocation failure becomes NULL.
#include <cstring>
#include <new>

#include <re2/re2.h>

extern "C" {
#include "re2_wrap.h"
}

struct om_re2 {
	re2::RE2 re;
	om_re2(re2::StringPiece p, const re2::RE2::Options &o) : re(p, o) {}
};

static void put_err(char *err, size_t size, const char *msg, size_t len)
{
	if (!err || !size)
		return;
	if (len >= size)
		len = size - 1;
	std::memcpy(err, msg, len);
	err[len] = 0;
}

extern "C" om_re2 *om_re2_new(const char *pattern, size_t len, char *err, size_t errsize)
{
	try {
		re2::RE2::Options o;
		o.set_log_errors(false); // the error is returned, never printed
		om_re2 *r = new om_re2(re2::StringPiece(pattern, len), o);
		if (!r->re.ok()) {
			const std::string &e = r->re.error();
			put_err(err, errsize, e.data(), e.size());
			delete r;
			return nullptr;
		}
		return r;
	} catch (...) {
		static const char nomem[] = "out of memory";
		put_err(err, errsize, nomem, sizeof nomem - 1);
		return nullptr;
	}
}

extern "C" int om_re2_full_match(const om_re2 *re, const char *s, size_t len)
{
	return re2::RE2::FullMatch(re2::StringPiece(s, len), re->re) ? 1 : 0;
}

extern "C" void om_re2_free(om_re2 *re)
{
	delete re;
}
