/*-------------------------------------------------------------------------
 *
 * flashscan_decimal.c
 *	  Exact decimal arithmetic in 128-bit integers for FlashScan Aggregate.
 *
 * A numeric value x of display scale s is held as the integer x * 10^s and
 * s.  Sums and products of such values are exact as long as they fit in
 * 128 bits (38 decimal digits), which is what PostgreSQL's own numeric
 * addition and multiplication compute: add_var() keeps the larger display
 * scale, numeric_mul() the sum of the two (it rounds only beyond
 * NUMERIC_DSCALE_MAX, far past what fits here).  Whatever does not fit, or
 * is not a finite number (NaN, +-Infinity), is refused, and the caller
 * hands that value to PostgreSQL's numeric functions instead.
 *
 * The decoding below reads numeric's on-disk format (the one every numeric
 * Datum has, see numeric.c): a 16-bit header, short form (sign, display
 * scale and weight packed in it) or long form (sign and scale in it, then a
 * 16-bit weight), then base-10000 digits, most significant first.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/numeric.h"

#include "flashscan.h"

/* numeric.c's header bits (the on-disk format) */
#define DEC_SIGN_MASK		0xC000
#define DEC_POS				0x0000
#define DEC_NEG				0x4000
#define DEC_SHORT			0x8000
#define DEC_SPECIAL			0xC000
#define DEC_SHORT_SIGN		0x2000
#define DEC_SHORT_DSCALE	0x1F80
#define DEC_SHORT_DSCALE_SHIFT 7
#define DEC_SHORT_WSIGN		0x0040
#define DEC_SHORT_WEIGHT	0x003F
#define DEC_DSCALE_MASK		0x3FFF
#define DEC_NBASE_DIGITS	4

const int64 fsdec_pow10_64[FSDEC_MAX_DIGITS64 + 1] = {
	1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000,
	1000000000, INT64CONST(10000000000), INT64CONST(100000000000),
	INT64CONST(1000000000000), INT64CONST(10000000000000),
	INT64CONST(100000000000000), INT64CONST(1000000000000000),
	INT64CONST(10000000000000000), INT64CONST(100000000000000000),
	INT64CONST(1000000000000000000)
};

/* 10^0 .. 10^38; 10^38 < 2^127 */
static int128 pow10_table[FSDEC_MAX_DIGITS + 1];
static bool pow10_ready = false;

static void
init_pow10(void)
{
	int128		p = 1;
	int			i;

	for (i = 0; i <= FSDEC_MAX_DIGITS; i++)
	{
		pow10_table[i] = p;
		p *= 10;
	}
	pow10_ready = true;
}

/* v * 10^by into *v; false when it does not fit. */
bool
fsdec_scale_up(int128 *v, int by)
{
	if (by == 0)
		return true;
	if (!pow10_ready)
		init_pow10();
	if (by < 0 || by > FSDEC_MAX_DIGITS)
		return false;
	/* one 64 x 64 -> 128-bit multiplication, which cannot overflow */
	if (by <= FSDEC_MAX_DIGITS64 && fsdec_fits_int64(*v))
	{
		*v = (int128) (int64) *v * fsdec_pow10_64[by];
		return true;
	}
	return !__builtin_mul_overflow(*v, pow10_table[by], v);
}

/*
 * The numeric Datum d as *v at display scale *scale.  False for NaN and
 * infinities, values of more digits than fit, and compressed or external
 * values (which the caller leaves to numeric's own functions).
 */
bool
fsdec_from_numeric(Datum d, int128 *v, int *scale)
{
	struct varlena *p = (struct varlena *) DatumGetPointer(d);
	const char *data;
	uint16		header;
	int			len,
				hdrlen,
				weight,
				dscale,
				ndigits,
				exp10,
				i;
	bool		neg;
	int128		acc = 0;
	const int16 *digits;

	if (VARATT_IS_EXTENDED(p) && !VARATT_IS_SHORT(p))
		return false;
	data = VARDATA_ANY(p);
	len = VARSIZE_ANY_EXHDR(p);
	if (len < (int) sizeof(uint16))
		return false;
	memcpy(&header, data, sizeof(uint16));
	if ((header & DEC_SIGN_MASK) == DEC_SPECIAL)
		return false;
	if ((header & DEC_SIGN_MASK) == DEC_SHORT)
	{
		hdrlen = sizeof(uint16);
		neg = (header & DEC_SHORT_SIGN) != 0;
		dscale = (header & DEC_SHORT_DSCALE) >> DEC_SHORT_DSCALE_SHIFT;
		weight = (header & DEC_SHORT_WSIGN) ?
			(int) (~DEC_SHORT_WEIGHT | (header & DEC_SHORT_WEIGHT)) :
			(int) (header & DEC_SHORT_WEIGHT);
	}
	else
	{
		int16		w;

		hdrlen = 2 * sizeof(uint16);
		if (len < hdrlen)
			return false;
		neg = (header & DEC_SIGN_MASK) == DEC_NEG;
		dscale = header & DEC_DSCALE_MASK;
		memcpy(&w, data + sizeof(uint16), sizeof(int16));
		weight = w;
	}
	if (dscale > FSDEC_MAX_SCALE)
		return false;
	ndigits = (len - hdrlen) / (int) sizeof(int16);
	if (ndigits == 0)
	{
		*v = 0;
		*scale = dscale;
		return true;
	}
	/* 9 base-10000 digits are 36 decimal digits: they always fit */
	if (ndigits > 9)
		return false;
	digits = (const int16 *) (data + hdrlen);
	exp10 = DEC_NBASE_DIGITS * (weight - ndigits + 1) + dscale;

	/*
	 * The last digit stands for 10000^(weight - ndigits + 1); the integer
	 * wanted is x * 10^dscale.  Digits below the display scale are zero in
	 * a stored numeric (it is rounded to its scale), so dropping them is
	 * exact; refuse anything else rather than lose a digit.  Up to four
	 * digits (16 decimal digits: money, quantities, rates) the work is done
	 * in 64 bits, and the usual case, a fraction ending inside the last
	 * digit, divides only that digit by a constant.
	 */
	if (ndigits <= 4 && exp10 > -DEC_NBASE_DIGITS)
	{
		int64		head = 0;
		int16		last;

		for (i = 0; i < ndigits - 1; i++)
		{
			int16		dig;

			memcpy(&dig, digits + i, sizeof(int16));
			head = head * 10000 + dig;
		}
		memcpy(&last, digits + ndigits - 1, sizeof(int16));
		switch (exp10)
		{
			case -3:
				if (last % 1000 != 0)
					return false;
				acc = head * 10 + last / 1000;
				break;
			case -2:
				if (last % 100 != 0)
					return false;
				acc = head * 100 + last / 100;
				break;
			case -1:
				if (last % 10 != 0)
					return false;
				acc = head * 1000 + last / 10;
				break;
			default:
				acc = head * 10000 + last;
				if (!fsdec_scale_up(&acc, exp10))
					return false;
				break;
		}
		*v = neg ? -acc : acc;
		*scale = dscale;
		return true;
	}
	for (i = 0; i < ndigits; i++)
	{
		int16		dig;

		memcpy(&dig, digits + i, sizeof(int16));
		acc = acc * 10000 + dig;
	}
	if (exp10 >= 0)
	{
		if (!fsdec_scale_up(&acc, exp10))
			return false;
	}
	else
	{
		int128		div;

		if (-exp10 > FSDEC_MAX_DIGITS)
			return false;
		if (!pow10_ready)
			init_pow10();
		div = pow10_table[-exp10];
		if (acc % div != 0)
			return false;
		acc /= div;
	}
	*v = neg ? -acc : acc;
	*scale = dscale;
	return true;
}

/* a + b at the larger of the two scales; false when it does not fit. */
bool
fsdec_add(int128 a, int sa, int128 b, int sb, int128 *r, int *sr)
{
	if (sa < sb)
	{
		if (!fsdec_scale_up(&a, sb - sa))
			return false;
		sa = sb;
	}
	else if (sb < sa)
	{
		if (!fsdec_scale_up(&b, sa - sb))
			return false;
	}
	*sr = sa;
	return !__builtin_add_overflow(a, b, r);
}

/* a * b at the sum of the scales, as numeric_mul(); false when it does not fit. */
bool
fsdec_mul(int128 a, int sa, int128 b, int sb, int128 *r, int *sr)
{
	if (sa + sb > FSDEC_MAX_SCALE)
		return false;
	*sr = sa + sb;
	if (fsdec_fits_int64(a) && fsdec_fits_int64(b))
	{
		*r = (int128) (int64) a * (int64) b;
		return true;
	}
	return !__builtin_mul_overflow(a, b, r);
}

/* The numeric of v at display scale scale (trailing zeros kept, as numeric does). */
Datum
fsdec_to_numeric(int128 v, int scale)
{
	char		buf[FSDEC_MAX_DIGITS + 8];
	char		digits[FSDEC_MAX_DIGITS + 2];
	int			nd = 0,
				pos = 0,
				i;
	bool		neg = v < 0;
	uint128		u = neg ? -(uint128) v : (uint128) v;

	Assert(scale >= 0 && scale <= FSDEC_MAX_SCALE);
	do
	{
		digits[nd++] = '0' + (int) (u % 10);
		u /= 10;
	} while (u != 0);
	while (nd <= scale)
		digits[nd++] = '0';
	if (neg)
		buf[pos++] = '-';
	for (i = nd - 1; i >= 0; i--)
	{
		buf[pos++] = digits[i];
		if (i == scale && scale > 0)
			buf[pos++] = '.';
	}
	buf[pos] = '\0';
	return DirectFunctionCall3(numeric_in, CStringGetDatum(buf),
							   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
}
