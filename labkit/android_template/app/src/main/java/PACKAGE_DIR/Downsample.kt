package @@PACKAGE@@

/**
 * The drawing -> the model's input: CELLS x CELLS counts 0..16, exactly like scikit-learn's digits
 * (a GRID x GRID bitmap of the digit, ink pixels counted in each 4 x 4 block).
 *
 * This is the same algorithm, line by line and with integer arithmetic only, as the course's Python
 * `labkit.android.downsample`; the course's tests translate this function to Python and check that
 * both give identical results. Keep the body in that simple subset (val/var, for..until, if, Int).
 */
object Downsample {
    const val GRID = @@GRID@@
    const val CELLS = @@CELLS@@
    const val INK_ALPHA = @@INK_ALPHA@@

    /** alpha: width * height alpha values (0..255) of the drawing, row by row. */
    fun toModelInput(alpha: IntArray, width: Int, height: Int): IntArray {
        var top = height
        var bottom = -1
        var left = width
        var right = -1
        for (y in 0 until height) {
            for (x in 0 until width) {
                if (alpha[y * width + x] >= INK_ALPHA) {
                    top = minOf(top, y)
                    bottom = maxOf(bottom, y)
                    left = minOf(left, x)
                    right = maxOf(right, x)
                }
            }
        }
        val counts = IntArray(CELLS * CELLS)
        if (bottom < 0) {
            return counts
        }
        val boxW = right - left + 1
        val boxH = bottom - top + 1
        val side = maxOf(boxW, boxH)
        val x0 = left - (side - boxW) / 2
        val y0 = top - (side - boxH) / 2
        val block = GRID / CELLS
        for (gy in 0 until GRID) {
            val sy = y0 + ((2 * gy + 1) * side) / (2 * GRID)
            for (gx in 0 until GRID) {
                val sx = x0 + ((2 * gx + 1) * side) / (2 * GRID)
                if (sy >= 0 && sy < height && sx >= 0 && sx < width && alpha[sy * width + sx] >= INK_ALPHA) {
                    counts[(gy / block) * CELLS + gx / block] += 1
                }
            }
        }
        return counts
    }
}
