package @@PACKAGE@@

import android.app.Activity
import android.os.Bundle
import android.view.ViewGroup.LayoutParams.MATCH_PARENT
import android.view.ViewGroup.LayoutParams.WRAP_CONTENT
import android.widget.Button
import android.widget.LinearLayout
import android.widget.RadioButton
import android.widget.RadioGroup
import android.widget.TextView

/** Draw a digit; see the prediction, its confidence and the inference time; switch CPU/XNNPACK/NNAPI. */
class MainActivity : Activity() {
    companion object {
        /** The model file in app/src/main/assets. */
        const val MODEL_ASSET = @@MODEL_ASSET@@
    }

    private lateinit var classifier: DigitClassifier
    private lateinit var drawView: DrawView
    private lateinit var resultText: TextView
    private var backend = Backend.CPU

    override fun onCreate(savedInstanceState: Bundle?) {
        super.onCreate(savedInstanceState)
        classifier = DigitClassifier(assets.open(MODEL_ASSET).use { it.readBytes() })

        drawView = DrawView(this).apply { onStrokeFinished = { predict() } }
        resultText = TextView(this).apply {
            textSize = 20f
            text = getString(R.string.draw_prompt)
        }
        val backends = RadioGroup(this).apply { orientation = RadioGroup.HORIZONTAL }
        for (b in Backend.entries) {
            backends.addView(RadioButton(this).apply {
                id = b.ordinal + 1
                text = b.label
            })
        }
        backends.check(backend.ordinal + 1)
        backends.setOnCheckedChangeListener { _, checkedId ->
            backend = Backend.entries[checkedId - 1]
            predict()
        }
        val clear = Button(this).apply {
            text = getString(R.string.clear)
            setOnClickListener {
                drawView.clear()
                resultText.text = getString(R.string.draw_prompt)
            }
        }
        val layout = LinearLayout(this).apply {
            orientation = LinearLayout.VERTICAL
            setPadding(32, 32, 32, 32)
            addView(drawView, LinearLayout.LayoutParams(MATCH_PARENT, WRAP_CONTENT))
            addView(resultText)
            addView(backends)
            addView(clear)
        }
        setContentView(layout)
    }

    private fun predict() {
        val (alpha, width, height) = drawView.alpha() ?: return
        val counts = Downsample.toModelInput(alpha, width, height)
        if (counts.all { it == 0 }) return
        resultText.text = try {
            val p = classifier.classify(counts, backend)
            getString(R.string.result, p.label, p.confidence * 100f, p.millis, p.backend.label)
        } catch (e: Exception) {
            getString(R.string.unavailable, backend.label, e.message ?: e.toString())
        }
    }

    override fun onDestroy() {
        classifier.close()
        super.onDestroy()
    }
}
