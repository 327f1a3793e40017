BA_scaleJ–
>